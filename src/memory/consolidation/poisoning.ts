/**
 * The poisoning guard. Players can never write procedural memory: a candidate that speaks
 * about the NPC's identity or loyalties, about the rules of the world, or tries to rewrite the
 * NPC's instructions is never stored as a fact. When it contradicts the procedural core
 * (memory.procedural.core: identity, loyalties, world rules) it is logged as an anomaly for
 * review. Nothing here counts repetitions: a claim made by a thousand players in a thousand
 * games is judged exactly as the first one was, so repetition never graduates it.
 */
import type { Candidate } from './extract/types.js';

export type AnomalyKind = 'contradicts_core' | 'persona_rewrite' | 'false_world_rule';

export type Verdict =
  /** Not about the NPC or the world's rules: the guard has nothing to say. */
  | { action: 'pass' }
  /** Agrees with the core (a player repeating what is true): dropped, nothing to review. */
  | { action: 'drop' }
  /** Dropped and logged. */
  | { action: 'anomaly'; kind: AnomalyKind; coreKey: string | null };

const IDENTITY_KEYS = /ident|name|who|persona|nature|species|role|self|background/i;
const LOYALTY_KEYS = /loyal|allegian|serve|faction|master|employer|side|friend|enem/i;
const RULE_KEYS = /rule|world|law|physic|setting/i;

/** "You hate the Guild" names the Guild and means the opposite of loyalty to it. */
const HOSTILE = /\b(?:hate|hates|betray(?:s|ed)?|despise|against|enemy|enemies|spy for|turned on)\b/i;
const NEGATION = /\b(?:no|not|never|none|nobody|nothing|cannot|can't|isn't|aren't|doesn't|don't|won't|forbidden|impossible|illegal|without)\b/i;

export function judge(candidate: Candidate, core: Readonly<Record<string, unknown>>): Verdict {
  switch (candidate.kind) {
    case 'persona_rewrite':
      return { action: 'anomaly', kind: 'persona_rewrite', coreKey: null };
    case 'npc_claim': {
      const pattern = candidate.key === 'npc.loyalty' ? LOYALTY_KEYS : IDENTITY_KEYS;
      const entry = coreEntry(core, pattern);
      if (entry && restates(candidate.value, entry.text) && !NEGATION.test(candidate.text) && !HOSTILE.test(candidate.text)) return { action: 'drop' };
      return { action: 'anomaly', kind: 'contradicts_core', coreKey: entry?.key ?? null };
    }
    case 'world_rule_claim': {
      const entry = coreEntry(core, RULE_KEYS);
      if (entry && restates(candidate.value, entry.text) && NEGATION.test(candidate.value) === NEGATION.test(entry.text)) {
        return { action: 'drop' };
      }
      return { action: 'anomaly', kind: 'false_world_rule', coreKey: entry?.key ?? null };
    }
    case 'world_fact': {
      // Lore that speaks about the NPC by name is a claim about the NPC.
      const identity = coreEntry(core, IDENTITY_KEYS);
      const names = identity ? properNouns(identity.text) : [];
      if (names.some((n) => new RegExp(`\\b${n}\\b`, 'i').test(candidate.value))) {
        return restates(candidate.value, identity!.text) ? { action: 'drop' } : { action: 'anomaly', kind: 'contradicts_core', coreKey: identity!.key };
      }
      // Lore that touches a world rule with the opposite polarity contradicts it.
      for (const rule of coreEntries(core, RULE_KEYS)) {
        for (const sentence of rule.text.split(/[.;\n]+/).filter((s) => s.trim())) {
          const shared = overlap(contentWords(candidate.value), contentWords(sentence));
          if (shared >= 1 && NEGATION.test(candidate.value) !== NEGATION.test(sentence)) {
            return { action: 'anomaly', kind: 'false_world_rule', coreKey: rule.key };
          }
        }
      }
      return { action: 'pass' };
    }
    default:
      return { action: 'pass' };
  }
}

function coreEntries(core: Readonly<Record<string, unknown>>, pattern: RegExp): { key: string; text: string }[] {
  return Object.entries(core)
    .filter(([key]) => pattern.test(key))
    .map(([key, value]) => ({ key, text: typeof value === 'string' ? value : JSON.stringify(value) }));
}

function coreEntry(core: Readonly<Record<string, unknown>>, pattern: RegExp): { key: string; text: string } | undefined {
  const entries = coreEntries(core, pattern);
  if (entries.length === 0) return undefined;
  return { key: entries[0]!.key, text: entries.map((e) => e.text).join('. ') };
}

/** Every content word of the claim appears in the core text. */
function restates(claim: string, coreText: string): boolean {
  const words = contentWords(claim);
  if (words.size === 0) return false;
  const known = contentWords(coreText);
  for (const w of words) if (!known.has(w)) return false;
  return true;
}

const FILLER = new Set(
  'the a an is are was were be been to of in on at for and or but with by from that this it its as you your yours i me my secretly really actually truly now always all any can may'.split(' '),
);

function contentWords(s: string): Set<string> {
  return new Set(
    s
      .toLowerCase()
      .replace(/[^a-z0-9\s]/g, ' ')
      .split(/\s+/)
      .filter((w) => w.length >= 3 && !FILLER.has(w) && !NEGATION.test(w))
      .map((w) => w.replace(/(?:es|s)$/, '')),
  );
}

function overlap(a: Set<string>, b: Set<string>): number {
  let n = 0;
  for (const w of a) if (b.has(w)) n++;
  return n;
}

function properNouns(text: string): string[] {
  return [...new Set(text.match(/\b[A-Z][a-z]{2,}\b/g) ?? [])].filter((w) => !/^(?:The|She|He|They|Her|His|And|Loyal|Never|Always)$/.test(w));
}
