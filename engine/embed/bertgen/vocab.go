package bertgen

import (
	"fmt"
	"strings"
)

// words are common English and programming words, enough for realistic
// WordPiece splits in tests ("running" -> run ##ning, "camelcase" -> camel ##case).
const words = `the of and to a in is it you that he was for on are with as i his they be at one have this from or had by
not word but what some we can out other were all there when up use your how said an each she which do their time if will way
about many then them write would like so these her long make thing see him two has look more day could go come did number
sound no most people my over know water than call first who may down side been now find any new work part take get place made
live where after back little only round man year came show every good me give our under name very through just form sentence
great think say help low line differ turn cause much mean before move right boy old too same tell does set three want air well
also play small end put home read hand port large spell add even land here must big high such follow act why ask men change went
light kind off need house picture try us again animal point mother world near build self earth father head stand own page should
country found answer school grow study still learn plant cover food sun four between state keep eye never last let thought city
tree cross farm hard start might story saw far sea draw left late run don while press close night real life few north open seem
together next white children begin got walk example ease paper group always music those both mark often letter until mile river
car feet care second book carry took science eat room friend began idea fish mountain stop once base hear horse cut sure watch
color face wood main enough plain girl usual young ready above ever red list though feel talk bird soon body dog family direct
pose leave song measure door product black short numeral class wind question happen complete ship area half rock order fire south
problem piece told knew pass since top whole king space heard best hour better true during hundred five remember step early hold
west ground interest reach fast verb sing listen six table travel less morning ten simple several vowel toward war lay against
pattern slow center love person money serve appear road map rain rule govern pull cold notice voice unit power town fine certain
fly fall lead cry dark machine note wait plan figure star box noun field rest correct able pound done beauty drive stood contain
front teach week final gave green oh quick develop ocean warm free minute strong special mind behind clear tail produce fact
street inch multiply nothing course stay wheel full force blue object decide surface deep moon island foot system busy test record
boat common gold possible plane stead dry wonder laugh thousand ago ran check game shape equate hot miss brought heat snow tire
bring yes distant fill east paint language among cafe resume naive
code file path error func function return test tests package import module build run running ran server client search query index
session message part tool call bash git commit branch merge rebase debug debugger fix bug stack trace log logs panic go golang
python java script type types string int float bool byte slice map struct interface method value pointer nil null true false
config json yaml http https url api request response status token tokens model models vector embed embedding embeddings chunk
camel case snake kebab upper lower parse parser lexer compile compiler link linker cache database sql sqlite table row column
lock mutex thread async await promise callback event handler route router user admin key secret read write open close delete
create update insert select from where order limit offset main init new make len cap append copy range loop if else switch
for while break continue defer recover go chan channel context cancel timeout deadline retry again failed fail failure success
npm node yarn cargo rust crate docker image container kube deploy release version tag pr issue review`

// pieces are WordPiece continuations.
const pieces = `s es ed ing ning er ers est ly ion ions tion tions ment ments ness able ible al ial ic ical ive ize ise ized ful less
y ry ty ity en ened ent ence ance ant ous case run ran go fix file path code name id ids er ed ing ify ified ist ism ure ture`

// cjk are a few common Chinese characters; HF splits each into its own token.
const cjk = `我 的 是 中 文 日 本 人 大 小 上 下 一 二 三`

// Vocabulary returns the generated vocabulary: special tokens first, then
// characters, words and pieces, padded with [unusedN] to size (0: no padding).
func Vocabulary(size int) []string {
	v := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
	seen := map[string]bool{}
	add := func(t string) {
		if t != "" && !seen[t] {
			seen[t] = true
			v = append(v, t)
		}
	}
	for _, t := range v {
		seen[t] = true
	}
	for c := 33; c < 127; c++ {
		if c >= 'A' && c <= 'Z' {
			continue // the vocabulary is uncased
		}
		add(string(rune(c)))
	}
	for c := 'a'; c <= 'z'; c++ {
		add("##" + string(c))
	}
	for c := '0'; c <= '9'; c++ {
		add("##" + string(c))
	}
	for _, w := range strings.Fields(cjk) {
		add(w)
	}
	for _, w := range strings.Fields(words) {
		add(w)
	}
	for _, p := range strings.Fields(pieces) {
		add("##" + p)
	}
	for i := 0; len(v) < size; i++ {
		add(fmt.Sprintf("[unused%d]", i))
	}
	return v
}
