// SPDX-License-Identifier: MIT
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
 *
 * Clip-space vertex shaders. In a VERT shader, the output declared
 * POSITION is followed through the instructions whose destination is
 * that output: the shader counts as clip_space when every one of them is
 * a plain MOV (no _SAT, no source modifier) from IN[0] with each written
 * component taken from the same component, or from an immediate. The
 * declarations come before the instructions in tgsi_dump's text, so one
 * pass suffices.
 */
#include <stdbool.h>
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

/* What one parse carries from line to line besides the counts. */
struct parse {
	struct predict_tgsi_stats *st;
	bool vert;	    /* the processor line said VERT */
	long pos_out;	    /* index of the OUT declared POSITION, -1 before its DCL */
	uint32_t pos_moves; /* writes of it that keep input 0's clip coordinates */
	uint32_t pos_other; /* any other write of it */
};

/* Skips spaces from @i in @line (@n bytes); returns the new index. */
static size_t skip_spaces(const char *line, size_t n, size_t i)
{
	while (i < n && is_space(line[i]))
		i++;
	return i;
}

/*
 * Reads "NAME[digits]" at @i: NAME must be @name. Sets *@index and returns
 * the index after "]", or 0 when the text does not match (0 is never a
 * valid end: a register takes at least 4 bytes).
 */
static size_t read_register(const char *line, size_t n, size_t i, const char *name, long *index)
{
	size_t nl = strlen(name);
	long v = 0;
	size_t d;

	if (n - i < nl + 3 || memcmp(line + i, name, nl) != 0 || line[i + nl] != '[')
		return 0;
	i += nl + 1;
	for (d = i; i < n && line[i] >= '0' && line[i] <= '9' && i - d < 9; i++)
		v = v * 10 + (line[i] - '0');
	if (i == d || i >= n || line[i] != ']')
		return 0;
	*index = v;
	return i + 1;
}

/* Reads an optional ".xyzw"-style suffix at @i into @c (up to 4, NUL-terminated). */
static size_t read_components(const char *line, size_t n, size_t i, char c[5])
{
	size_t k = 0;

	c[0] = '\0';
	if (i >= n || line[i] != '.')
		return i;
	for (i++; i < n && k < 4 && strchr("xyzw", line[i]) && line[i]; i++)
		c[k++] = line[i];
	c[k] = '\0';
	return i;
}

/* "DCL OUT[n], POSITION" (@rest follows "DCL"): remembers n. */
static void position_declaration(struct parse *p, const char *line, size_t n, size_t i)
{
	static const char tail[] = ", POSITION";
	char c[5];
	long idx;
	size_t e;

	i = skip_spaces(line, n, i);
	e = read_register(line, n, i, "OUT", &idx);
	if (!e)
		return;
	e = read_components(line, n, e, c);
	if (n - e >= sizeof(tail) - 1 && memcmp(line + e, tail, sizeof(tail) - 1) == 0 &&
	    skip_spaces(line, n, e + sizeof(tail) - 1) == n)
		p->pos_out = idx;
}

/*
 * An instruction @op (without _SAT; @sat says whether it had it) whose
 * operands start at @i: if it writes the position output, records whether
 * it keeps input 0's coordinates.
 */
static void position_write(struct parse *p, const char *op, bool sat, const char *line, size_t n,
			   size_t i)
{
	static const char all[] = "xyzw";
	char mask[5], swz[5];
	long idx;
	size_t e, r;

	if (!p->vert || p->pos_out < 0)
		return;
	i = skip_spaces(line, n, i);
	e = read_register(line, n, i, "OUT", &idx);
	if (!e || idx != p->pos_out)
		return;
	e = read_components(line, n, e, mask);
	if (!mask[0])
		memcpy(mask, all, sizeof(all));
	e = skip_spaces(line, n, e);
	if (sat || strcmp(op, "MOV") != 0 || e >= n || line[e] != ',') {
		p->pos_other++;
		return;
	}
	e = skip_spaces(line, n, e + 1);
	if ((r = read_register(line, n, e, "IMM", &idx))) {
		e = read_components(line, n, r, swz);
		if (skip_spaces(line, n, e) == n) {
			p->pos_moves++;
			return;
		}
	} else if ((r = read_register(line, n, e, "IN", &idx)) && idx == 0) {
		e = read_components(line, n, r, swz);
		if (!swz[0])
			memcpy(swz, all, sizeof(all));
		if (skip_spaces(line, n, e) == n && strlen(swz) == 4) {
			bool same = true;

			/* Written component k reads source component k. */
			for (size_t k = 0; mask[k]; k++)
				same = same && swz[strchr(all, mask[k]) - all] == mask[k];
			if (same) {
				p->pos_moves++;
				return;
			}
		}
	}
	p->pos_other++;
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

static void parse_line(struct parse *p, const char *line, size_t n)
{
	struct predict_tgsi_stats *st = p->st;
	char w[TGSI_WORD_MAX + 1];
	size_t i = 0, ws, wl;
	bool sat;

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
	if (strcmp(w, "DCL") == 0) {
		static const char vpi[] = "VIEWPORT_INDEX";

		st->decl++;
		position_declaration(p, line, n, i);
		for (size_t k = i; k + sizeof(vpi) - 1 <= n; k++)
			if (memcmp(line + k, vpi, sizeof(vpi) - 1) == 0)
				st->viewport_index = true;
	} else if (strcmp(w, "IMM") == 0) {
		st->imm++;
	} else if (strcmp(w, "PROPERTY") == 0) {
		st->props++;
	} else if (IN(w, processors)) {
		p->vert = strcmp(w, "VERT") == 0;
	} else {
		sat = wl > 4 && strcmp(w + wl - 4, "_SAT") == 0;
		add_instruction(st, w, wl); /* strips _SAT */
		position_write(p, w, sat, line, n, i);
	}
}

void predict_tgsi_parse(const char *text, size_t len, struct predict_tgsi_stats *st)
{
	size_t pos = 0;

	struct parse p = {.st = st, .pos_out = -1};

	memset(st, 0, sizeof(*st));
	if (!text)
		return;
	while (pos < len && text[pos] != '\0') {
		size_t end = pos;

		while (end < len && text[end] != '\n' && text[end] != '\0')
			end++;
		parse_line(&p, text + pos, end - pos);
		if (end < len && text[end] == '\n')
			end++;
		pos = end;
	}
	st->clip_space = p.vert && p.pos_moves > 0 && p.pos_other == 0;
}
