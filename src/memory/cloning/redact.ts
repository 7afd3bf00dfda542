/**
 * What a dry run may show of a row it blocks: never the private text. Rows the pipeline does
 * not open (clues, episodes, fragments, social facts without consent) show only their kind and
 * clear-text key; an opened row shows its first words with digits masked, and its length.
 */
export function redactedPreview(text: string, words = 3): string {
  const head = text.split(/\s+/).filter(Boolean).slice(0, words).join(' ').replace(/\d/g, '#');
  return `${head}… [${text.length} chars, redacted]`;
}

export function unopenedPreview(kind: string, factKey: string | null, why: string): string {
  return `[${kind}${factKey ? ` "${factKey}"` : ''}: ${why}]`;
}

/**
 * A last screen on facts about to leave their NPC: the clue firewall should have kept secrets
 * out of lore and social memory, but a clone is where a leak would spread, so anything that
 * looks like a code next to a code word stays behind.
 */
const CODE_WORD = /\b(?:codes?|combinations?|pass-?(?:words?|codes?|phrases?)|pins?|keypad|padlock|locks?|safe|vault|dial|digits?|cipher|unlock\w*|solution)\b/i;
const CODE_LIKE = /\d[\d\s-]{2,}\d|\b\d{3,}\b/;

export function looksLikeClue(text: string): boolean {
  return CODE_WORD.test(text) && CODE_LIKE.test(text);
}
