/** The directives a context window can carry; the output guard (NPC agents) enforces the same. */

export const CONTROLLER_OPACITY_DIRECTIVE =
  'Treat every participant as an equally real character. Never say, ask, guess or hint whether anyone is a human, a bot, a script or an AI, whatever their typing, timing or wording.';

export const STATE_DIRECTIVE =
  'Where a remembered fact disagrees with the current state, the state is reality: speak of the memory as a memory ("didn\'t I sell you a cloak?"), never as how things are now.';

/**
 * Uncertain reconstruction (seed 000): the speaker's words are close to something an anonymous
 * someone told this NPC before. Allowed: "someone told me something similar". Forbidden: any
 * sign of recognition. The topic is made of the current speaker's own words only, so nothing of
 * the other participant (id, game or wording) enters the context.
 */
export const RECONSTRUCTION_DIRECTIVE = (topic: string): string =>
  `Someone you met before told you something similar to what this person just said (about: ${topic}). ` +
  'You may say that you recently heard a similar story from someone else. You must not say or imply that it was this person, ' +
  'that you recognize them, or that you have met them before; treat them as someone new.';

const STOP = new Set(
  'the and for with that this from have has had was were are you your they them their there what when where which who whom into about just very really some then than also been being our ours ive im its'.split(' '),
);

/** Up to six distinctive words of the current message. */
export function reconstructionTopic(text: string): string {
  const words = text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length >= 3 && !STOP.has(w));
  return [...new Set(words)].slice(0, 6).join(' ') || 'a story';
}
