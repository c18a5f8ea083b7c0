/*
 * stopwords.c - the stop words of a few languages: function words that
 * carry no topic. Words are case folded, unstemmed, sorted (bsearch).
 * Other languages rely on the common-term damping of text.c alone.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "relate_int.h"

static const char *const en[] = {
	"a", "about", "above", "after", "again", "against", "all", "also",
	"am", "an", "and", "any", "are", "as", "at", "be", "because", "been",
	"before", "being", "below", "between", "both", "but", "by", "can",
	"could", "did", "do", "does", "doing", "down", "during", "each",
	"either", "etc", "even", "ever", "every", "few", "for", "from",
	"further", "had", "has", "have", "having", "he", "her", "here",
	"hers", "herself", "him", "himself", "his", "how", "however", "i",
	"if", "in", "into", "is", "it", "its", "itself", "just", "least",
	"less", "let", "like", "many", "may", "me", "might", "more", "most",
	"much", "must", "my", "myself", "neither", "no", "nor", "not", "now",
	"of", "off", "often", "on", "once", "one", "only", "or", "other",
	"others", "otherwise", "our", "ours", "ourselves", "out", "over",
	"own", "per", "perhaps", "quite", "rather", "same", "several",
	"shall", "she", "should", "since", "so", "some", "such", "than",
	"that", "the", "their", "theirs", "them", "themselves", "then",
	"there", "therefore", "these", "they", "this", "those", "though",
	"through", "thus", "to", "too", "under", "until", "up", "upon", "us",
	"very", "via", "was", "we", "well", "were", "what", "whatever",
	"when", "where", "whether", "which", "while", "who", "whom", "whose",
	"why", "will", "with", "within", "without", "would", "yet", "you",
	"your", "yours", "yourself", "yourselves",
};

static const char *const de[] = {
	"aber", "als", "am", "an", "auch", "auf", "aus", "bei", "bin", "bis",
	"da", "das", "dass", "dem", "den", "der", "des", "die", "dies",
	"diese", "dieser", "dieses", "doch", "du", "durch", "ein", "eine",
	"einem", "einen", "einer", "eines", "er", "es", "für", "hat",
	"hatte", "ich", "ihr", "im", "in", "ist", "ja", "kann", "mit",
	"nach", "nicht", "noch", "nur", "ob", "oder", "sich", "sie", "sind",
	"so", "um", "und", "uns", "von", "vor", "war", "was", "wie", "wir",
	"wird", "zu", "zum", "zur",
};

static const char *const fr[] = {
	"au", "aux", "avec", "ce", "ces", "cette", "dans", "de", "des", "du",
	"elle", "en", "est", "et", "il", "ils", "je", "la", "le", "les",
	"leur", "lui", "mais", "me", "mes", "même", "ne", "nous", "on", "ou",
	"par", "pas", "pour", "qu", "que", "qui", "sa", "se", "ses", "son",
	"sont", "sur", "ta", "te", "tu", "un", "une", "vous",
};

static const char *const es[] = {
	"al", "como", "con", "de", "del", "el", "ella", "en", "es", "esta",
	"este", "la", "las", "lo", "los", "mi", "más", "no", "o", "para",
	"pero", "por", "que", "se", "si", "sin", "sobre", "su", "sus", "un",
	"una", "uno", "y", "ya",
};

static const char *const pt[] = {
	"ao", "aos", "as", "com", "como", "da", "das", "de", "do", "dos",
	"e", "ela", "ele", "em", "entre", "essa", "esse", "esta", "este",
	"foi", "há", "mais", "mas", "na", "nas", "no", "nos", "não", "o",
	"os", "ou", "para", "pela", "pelo", "por", "que", "se", "sem", "ser",
	"seu", "sua", "são", "um", "uma",
};

struct list {
	const char *lang;
	const char *const *w;
	size_t n;
};

#define L(x) { #x, x, sizeof(x) / sizeof(x[0]) }
static const struct list lists[] = { L(de), L(en), L(es), L(fr), L(pt) };
#undef L

struct key {
	const char *s;
	size_t len;
};

static int cmp(const void *k, const void *e)
{
	const struct key *key = k;
	const char *w = *(const char *const *)e;
	size_t wl = strlen(w);
	int c = memcmp(key->s, w, key->len < wl ? key->len : wl);

	if (c)
		return c;
	return key->len < wl ? -1 : key->len > wl;
}

int stopword_is(const char *lang, const char *word, size_t len)
{
	struct key k = { word, len };
	char p[3] = { 0, 0, 0 };
	size_t i;

	if (lang == NULL)
		lang = "en";	/* no language found: most of the web */
	p[0] = (char)tolower((unsigned char)lang[0]);
	if (p[0])
		p[1] = (char)tolower((unsigned char)lang[1]);
	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		if (strcmp(lists[i].lang, p) == 0)
			return bsearch(&k, lists[i].w, lists[i].n,
				       sizeof(char *), cmp) != NULL;
	return 0;
}
