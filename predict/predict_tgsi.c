/*
 * TGSI text histogram (see predict_tgsi.h).
 *
 * The text is read line by line. A line's first word (after an optional
 * "N:" instruction label) says what it is: DCL, IMM, PROPERTY, a
 * processor name, or an opcode (with an optional _SAT suffix). Opcode
 * names and their kinds are those of Mesa's
 * src/gallium/auxiliary/tgsi/tgsi_info_opcodes.h; any other word counts as
 * an ALU instruction, so that unknown or future opcodes still cost
 * something. Every byte is looked at a bounded number of times.
 */
#include <string.h>

#include "predict_tgsi.h"

/* Longest opcode name we look up (ATOMINC_WRAP_SAT fits); longer words are ALU. */
#define TGSI_WORD_MAX 24

static const char *const tex_ops[] = {
    "TEX",	     "TXP",	      "TXB",	      "TXL",	     "TXD",
    "TXF",	     "TXQ",	      "TXQS",	      "TXB2",	     "TXL2",
    "TEX2",	     "TEX_LZ",	      "TXF_LZ",	      "TG4",	     "LODQ",
    "SAMPLE",	     "SAMPLE_B",      "SAMPLE_C",     "SAMPLE_C_LZ", "SAMPLE_D",
    "SAMPLE_L",	     "SAMPLE_I",      "SAMPLE_I_MS",  "GATHER4",     "SVIEWINFO",
    "SAMPLE_POS",    "SAMPLE_INFO",   "LOAD",	      "STORE",	     "RESQ",
    "ATOMUADD",	     "ATOMXCHG",      "ATOMCAS",      "ATOMAND",     "ATOMOR",
    "ATOMXOR",	     "ATOMUMIN",      "ATOMUMAX",     "ATOMIMIN",    "ATOMIMAX",
    "ATOMFADD",	     "ATOMINC_WRAP",  "ATOMDEC_WRAP", "FBFETCH",     "INTERP_CENTROID",
    "INTERP_SAMPLE", "INTERP_OFFSET",
};

static const char *const flow_ops[] = {
    "IF",	 "UIF",	 "ELSE",    "ENDIF",  "BGNLOOP", "ENDLOOP", "BRK",     "BREAKC",
    "CONT",	 "CAL",	 "RET",	    "BGNSUB", "ENDSUB",	 "SWITCH",  "CASE",    "DEFAULT",
    "ENDSWITCH", "KILL", "KILL_IF", "DEMOTE", "END",	 "EMIT",    "ENDPRIM", "BARRIER",
};

static const char *const processors[] = {"VERT", "FRAG", "GEOM", "TESS_CTRL", "TESS_EVAL", "COMP"};

static int is_word_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.';
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static int in_table(const char *w, const char *const *table, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(w, table[i]) == 0)
			return 1;
	return 0;
}

#define IN(w, t) in_table((w), (t), sizeof(t) / sizeof((t)[0]))

/* Counts the tokens of @line (@n bytes): runs of word characters, and each other visible byte. */
static uint32_t count_tokens(const char *line, size_t n)
{
	uint32_t tokens = 0;
	size_t i = 0;

	while (i < n) {
		if (is_space(line[i])) {
			i++;
		} else if (is_word_char(line[i])) {
			while (i < n && is_word_char(line[i]))
				i++;
			tokens++;
		} else {
			i++;
			tokens++;
		}
	}
	return tokens;
}

static void add_instruction(struct predict_tgsi_stats *st, char *w, size_t wl)
{
	if (wl > 4 && strcmp(w + wl - 4, "_SAT") == 0)
		w[wl - 4] = '\0';
	if (IN(w, tex_ops)) {
		st->tex++;
	} else if (IN(w, flow_ops)) {
		st->flow++;
		if (strcmp(w, "BGNLOOP") == 0) {
			st->loops++;
			st->has_loop = true;
			/* Proving a constant trip count needs data flow; be conservative. */
			st->unbounded_loop = true;
		}
	} else {
		st->alu++;
	}
}

static void parse_line(struct predict_tgsi_stats *st, const char *line, size_t n)
{
	char w[TGSI_WORD_MAX + 1];
	size_t i = 0, ws, wl;

	st->tokens += count_tokens(line, n);
	while (i < n && is_space(line[i]))
		i++;
	/* Instruction label "12:" */
	ws = i;
	while (i < n && line[i] >= '0' && line[i] <= '9')
		i++;
	if (i > ws && i < n && line[i] == ':') {
		i++;
		while (i < n && is_space(line[i]))
			i++;
	} else {
		i = ws;
	}
	ws = i;
	while (i < n && (is_word_char(line[i]) && line[i] != '.'))
		i++;
	wl = i - ws;
	if (wl == 0)
		return; /* blank line, or punctuation only (continued immediates) */
	if (!((line[ws] >= 'A' && line[ws] <= 'Z') || (line[ws] >= 'a' && line[ws] <= 'z')))
		return; /* numbers: not an instruction */
	if (wl > TGSI_WORD_MAX) {
		st->alu++;
		return;
	}
	memcpy(w, line + ws, wl);
	w[wl] = '\0';
	if (strcmp(w, "DCL") == 0)
		st->decl++;
	else if (strcmp(w, "IMM") == 0)
		st->imm++;
	else if (strcmp(w, "PROPERTY") == 0)
		st->props++;
	else if (!IN(w, processors))
		add_instruction(st, w, wl);
}

void predict_tgsi_parse(const char *text, size_t len, struct predict_tgsi_stats *st)
{
	size_t pos = 0;

	memset(st, 0, sizeof(*st));
	if (!text)
		return;
	while (pos < len && text[pos] != '\0') {
		size_t end = pos;

		while (end < len && text[end] != '\n' && text[end] != '\0')
			end++;
		parse_line(st, text + pos, end - pos);
		if (end < len && text[end] == '\n')
			end++;
		pos = end;
	}
}
