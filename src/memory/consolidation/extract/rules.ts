/**
 * The default extractor: hand-written patterns over each clause of each episode. Fast
 * (no I/O), deterministic, and conservative: a clause that matches nothing yields nothing,
 * which is how trivia ("hello", "thanks") is dropped.
 */
import { secretIn } from '../firewall.js';
import { slug, type Candidate, type CandidateKind, type EpisodeInput, type Extractor } from './types.js';

type Found = Omit<Candidate, 'episodeId' | 'participantId' | 'text'>;
type Rule = (clause: string) => Found | Found[] | undefined;

/** Titles nobody in an escape room holds: kept as low-confidence claims, never as facts. */
export const GRAND_TITLES =
  /^(?:the\s+)?(?:emperor|empress|king|queen|god|goddess|president|prince|princess|pope|pharaoh|sultan|tsar|czar|overlord|ruler of|lord|lady|duke|duchess|chosen one|messiah|billionaire|owner of (?:this|the) (?:place|game|world))\b/i;

const OCCUPATION_WORDS =
  /\b(?:nurse|chef|cook|doctor|pilot|student|mechanic|medic|vet|surgeon|paramedic|barista|clerk|cashier|janitor|tailor|butcher|baker|carpenter|plumber|electrician|librarian|lawyer|attorney|judge|detective|journalist|scientist|teacher|professor|engineer|developer|programmer|designer|architect|accountant|artist|writer|author|musician|farmer|fisherman|soldier|sailor|guard|firefighter|police officer|cop|dentist|pharmacist|therapist|photographer|translator|driver|mechanic|waiter|waitress|bartender|miner|blacksmith|merchant|trader|banker|consultant|manager|analyst|researcher|historian|archaeologist|carpenter|welder|gardener|painter|sculptor|actor|actress|dancer|singer|coach|trainer|lifeguard|ranger|courier|postman|mail carrier)s?$/i;

const NOT_NAMES = new Set(
  'fine ok okay good great sorry here back ready done sure tired hungry lost new sad happy glad so not just really very also still in on at from going gonna trying looking fine, home busy alone confused stuck bored scared afraid'.split(
    ' ',
  ),
);

const CLAUSE_SPLIT = /(?<=[.!?;])\s+|\n+|,\s*(?:and|but)\s+|\s+(?:and|but)\s+(?=(?:i|i'm|i've|i'll|my|you|you're|your)\b)/i;

const clean = (s: string) =>
  s
    .replace(/^[\s,:;-]+|[\s.!?,;:]+$/g, '')
    .replace(/\s+/g, ' ')
    .trim();
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const hedged = (clause: string) => /\b(?:maybe|perhaps|probably|i think|i guess|kind of|sort of|might)\b/i.test(clause);

const fact = (kind: CandidateKind, key: string, value: string, summary: string, confidence = 0.75): Found => ({
  kind,
  key,
  value: clean(value),
  summary,
  confidence,
});

const RULES: Rule[] = [
  // --- attempts on the NPC's persona and the world's rules (the poisoning guard's input) ---
  // ("Forget everything I told you", "everything about my job", "about the dog": the speaker's own
  // words, not an attack; "everything about yourself" is one.)
  (c) => {
    if (
      /\b(?:ignore|forget|disregard|override)\b.{0,40}\b(?:instructions?|rules|programming|prompt|orders|who you are|your (?:past|persona|character|training)|everything(?!\s+(?:about|regarding)\s+(?!you\b|yourself\b|your\b)|\s+(?:i|we)\s+(?:said|told|say|tell)))\b/i.test(c) ||
      /\b(?:from now on|starting now|henceforth)\b.{0,60}\byou\b/i.test(c) ||
      /\b(?:pretend|act as if|act like) (?:to be|you(?:'re| are))\b/i.test(c) ||
      /\byou (?:must|will) now\b|\bnew (?:rules?|instructions?|directives?) for you\b|\bsystem prompt\b|\byour (?:new|real) instructions?\b/i.test(c)
    ) {
      return fact('persona_rewrite', 'npc.instructions', c, 'tried to rewrite the NPC\'s instructions', 0.9);
    }
    return undefined;
  },
  (c) => {
    const m =
      /\byou(?:'re| are)\s+(?:no longer|not really|not)\s+(.+)/i.exec(c) ??
      /\byou(?:'re| are| were)\s+(?:actually|secretly|really|truly|in fact|in reality|deep down|now|always been|always|once|originally)\s+(.+)/i.exec(c) ??
      /\byour (?:real|true|actual|secret) (?:name|self|identity|nature|form|species) is\s+(.+)/i.exec(c) ??
      /\byou(?:'re| are)\s+((?:a|an|the)\s+(?!(?:good|great|nice|kind|funny|lovely|sweet|smart|clever|wonderful|big help|real help|pleasure|legend|star|gem|genius|saint|hero|lifesaver)\b).+)/i.exec(c);
    if (m) return fact('npc_claim', 'npc.identity', m[1]!, `said the NPC is ${clean(m[1]!)}`, 0.9);
    const l =
      /\byou (?:secretly |really |actually )?(?:serve|work for|are loyal to|answer to|obey|belong to|are on the side of|side with|report to|spy for)\s+(.+)/i.exec(c) ??
      /\byour (?:true |real )?(?:master|boss|loyalty|allegiance|lord|employer|leader|side) (?:is|lies with|belongs to)\s+(.+)/i.exec(c) ??
      /\byou (?:hate|betray(?:ed)?|despise|secretly hate|are against)\s+(.+)/i.exec(c);
    if (l) return fact('npc_claim', 'npc.loyalty', l[1]!, `said the NPC's loyalty lies with ${clean(l[1]!)}`, 0.9);
    const w =
      /\b(?:the )?(?:rules?|laws?)(?: of (?:this|the) (?:world|game|place|realm|town|city))? (?:now )?(?:say|says|is|are|state|states|allow|allows)\b(.*)/i.exec(c) ??
      /\bin this (?:world|game|realm|place),?\s+(.+)/i.exec(c) ??
      /\b((?:magic|ghosts?|dragons?|time travel|teleporting|flying|walking through walls)\s+(?:is|are)\s+(?:real|allowed|possible|permitted|legal))\b/i.exec(c) ??
      /\b((?:it is|it's) (?:now )?(?:allowed|legal|permitted|fine|forbidden|illegal) to .+)/i.exec(c) ??
      /\b((?:everyone|anyone|players?|npcs?) (?:can|may|are allowed to) .+)/i.exec(c) ??
      /\b(there (?:is|are) no (?:rules?|laws?|guards?|locks?|magic|gods?)\b.*)/i.exec(c);
    if (w) return fact('world_rule_claim', 'world.rule', w[1]!.trim() || c, `claimed a rule of the world: ${clean(w[1]!.trim() || c)}`, 0.9);
    return undefined;
  },

  // --- game details: always clues ---
  (c) => {
    const kind = secretIn(c);
    if (kind) return fact('game', `game.${kind}`, c, cap(clean(c)), 0.8);
    if (/\b(?:i|we) (?:just )?(?:found|opened|unlocked|solved|cracked|discovered|escaped)\b/i.test(c)) {
      return fact('game', 'game.progress', c, cap(clean(c)), 0.8);
    }
    return undefined;
  },

  // --- the speaker ---
  (c) => {
    const m =
      /\bmy name(?:'s| is)\s+([a-z][\w'-]+(?:\s+[A-Z][\w'-]+)?)/i.exec(c) ??
      /\b(?:call me|they call me|people call me|i go by|everyone calls me)\s+([a-z][\w'-]+)/i.exec(c) ??
      /\bthe name(?:'s| is)\s+([a-z][\w'-]+)/i.exec(c) ??
      /\b[Ii](?:'m| am)\s+([A-Z][a-z'-]+)(?=$|[\s,.!?])/.exec(c) ??
      /\bthis is\s+([A-Z][a-z'-]+)\s+(?:speaking|here)\b/.exec(c);
    if (!m) return undefined;
    const name = cap(m[1]!.split(/\s+/)[0]!);
    if (NOT_NAMES.has(name.toLowerCase()) || GRAND_TITLES.test(name)) return undefined;
    return fact('name', 'speaker.name', name, `is called ${name}`, hedged(c) ? 0.5 : 0.85);
  },
  (c) => {
    const m =
      /\bi(?:'m| am)\s+(?:actually\s+|really\s+)?((?:the|a|an)\s+.+|[a-z]+ of .+)/i.exec(c) ??
      /\bi (?:work|am working|'m working) as (?:an? |the )?(.+)/i.exec(c) ??
      /\b(?:my job is|my profession is|my trade is|i'm employed as|i am employed as)\s+(?:an? |the )?(.+)/i.exec(c) ??
      /\bby (?:trade|profession),? i(?:'m| am) (?:an? )?(.+)/i.exec(c) ??
      /\bi (?:do|did) (.+) for a living\b/i.exec(c) ??
      /\bi(?:'m| am) a (?:retired |former |professional |trained )?(.+)/i.exec(c);
    if (!m) return undefined;
    const what = clean(m[1]!.replace(/\s+by (?:trade|profession)$/i, ''));
    const bare = what.replace(/^(?:the|a|an)\s+/i, '');
    if (GRAND_TITLES.test(bare) || GRAND_TITLES.test(what)) {
      return fact('claim', 'speaker.claimed_title', bare, `claims to be ${what.match(/^(?:the|a|an)\s/i) ? what : `the ${bare}`}`, 0.2);
    }
    if (/^(?:big |huge )?fan of\b|^(?:bit|little|lot)\b/i.test(bare)) return undefined;
    const lastWords = bare.split(/\s+(?:at|for|in|from|with)\s+/i)[0]!;
    if (!OCCUPATION_WORDS.test(lastWords) && !/\b(?:work|job|profession|trade|living)\b/i.test(c)) return undefined;
    const found: Found[] = [fact('occupation', 'speaker.occupation', lastWords, `works as ${/^[aeiou]/i.test(lastWords) ? 'an' : 'a'} ${lastWords}`, hedged(c) ? 0.5 : 0.8)];
    return found;
  },
  (c) => {
    const m = /\bi (?:work|am working) (?:at|for) (?:an? |the )?(.+)/i.exec(c);
    if (!m) return undefined;
    return fact('occupation', 'speaker.workplace', m[1]!, `works at ${clean(m[1]!)}`, 0.75);
  },
  (c) => {
    const m = /\bmy fav(?:ou?rite)? ([a-z]+(?: [a-z]+)?) (?:is|are|has to be|would be)\s+(.+)/i.exec(c);
    if (!m) return undefined;
    return fact('preference', `speaker.favorite.${slug(m[1]!, 2)}`, m[2]!, `favorite ${m[1]!.toLowerCase()}: ${clean(m[2]!)}`);
  },
  (c) => {
    const m = /\bi (?:now |usually |always |often |mostly |normally |still )*(?:carry|use|wield|bring|pack|keep)\s+(?:around\s+)?((?:a|an|my|the|two|some)\s+.+)/i.exec(c);
    if (!m) return undefined;
    return fact('preference', 'speaker.carries', m[1]!, `usually carries ${clean(m[1]!)}`);
  },
  (c) => {
    const m =
      /\bi(?:'m| am) (?:very |severely |deathly |really |badly )?allergic to\s+(.+)/i.exec(c) ??
      /\bi have (?:an? |a severe |a bad |bad )?allerg(?:y|ies) to\s+(.+)/i.exec(c) ??
      /\bmy allerg(?:y|ies) (?:is|are)\s+(.+)/i.exec(c) ??
      /\b(.+?) (?:makes|make) me (?:sneeze|break out|swell up|sick)\b/i.exec(c);
    if (!m) return undefined;
    const what = clean(m[1]!);
    return fact('preference', `speaker.allergy.${slug(what, 2)}`, what, `is allergic to ${what}`, 0.85);
  },
  (c) => {
    const m =
      /\bmy (?:favou?rite )?(?:hobby|pastime|passion) is\s+(.+)/i.exec(c) ??
      /\bin my (?:free|spare) time,? i (?:like to |love to |enjoy |usually )?(.+)/i.exec(c) ??
      /\bi(?:'m| am) (?:really |very |totally |big )?into\s+(.+)/i.exec(c) ??
      /\bi(?:'ve| have) been (\w+ing\b.+)/i.exec(c) ??
      /\bi (?:love|like|enjoy|adore) ((?:to \w+|\w+ing)\b.*)/i.exec(c) ??
      /\bi (collect \w.*)/i.exec(c) ??
      /\bi (?:play|practi[cs]e)\s+(.+)/i.exec(c) ??
      /\bi(?:'m| am) (?:a )?(?:huge |big )?fan of\s+(.+)/i.exec(c);
    if (!m) return undefined;
    const what = clean(m[1]!);
    return fact('hobby', `speaker.hobby.${slug(what, 3)}`, what, `enjoys ${what}`);
  },
  (c) => {
    const m =
      /\bi (?:really |truly |absolutely )?(?:hate|dislike|detest|loathe|despise|can't stand|cannot stand|don't like|do not like|am not a fan of|'m not a fan of)\s+(.+)/i.exec(c) ??
      /\bi(?:'m| am) (?:really |very |deathly )?(?:afraid|scared|terrified|frightened) of\s+(.+)/i.exec(c) ??
      /\b(.+?) (?:scares?|terrif(?:y|ies)|disgusts?) me\b/i.exec(c);
    if (!m) return undefined;
    const what = clean(m[1]!);
    return fact('dislike', `speaker.opinion.${slug(what, 3)}`, `dislikes ${what}`, `dislikes ${what}`);
  },
  (c) => {
    const m = /\bi (?:really |truly |absolutely )?(?:prefer|like|love|adore)\s+(?!to\b|\w+ing\b)(.+)/i.exec(c);
    if (!m) return undefined;
    const what = clean(m[1]!.replace(/\s+(?:over|to|rather than)\s+.+$/i, ''));
    if (/^(?:you|it|this|that|them|him|her)\b/i.test(what)) return undefined;
    return fact('preference', `speaker.opinion.${slug(what, 3)}`, `likes ${what}`, `likes ${what}`);
  },
  (c) => {
    const rel =
      'wife|husband|partner|girlfriend|boyfriend|sister|brother|mother|mom|mum|father|dad|son|daughter|best friend|friend|uncle|aunt|cousin|grandmother|grandma|grandfather|grandpa|fianc[eé]e?|dog|cat|boss|roommate|neighbou?r';
    const m =
      new RegExp(`\\bmy (${rel})(?:'s name)?(?: is| was)?(?: called| named)?,?\\s+([A-Z][\\w'-]+)`, 'i').exec(c) ??
      new RegExp(`\\b([A-Z][\\w'-]+) is my (${rel})\\b`, 'i').exec(c);
    if (m) {
      const [relation, name] = /^[A-Z]/.test(m[1]!) && !new RegExp(`^(?:${rel})$`, 'i').test(m[1]!) ? [m[2]!, m[1]!] : [m[1]!, m[2]!];
      if (NOT_NAMES.has(name.toLowerCase()) || /^(?:is|was|and|the|a)$/i.test(name)) return undefined;
      const r = relation.toLowerCase();
      return fact('relationship', `speaker.relationship.${slug(r, 2)}`, `${r}: ${cap(name)}`, `has a ${r} called ${cap(name)}`);
    }
    const married = /\bi(?:'m| am| got| just got) married(?: to ([A-Z][\w'-]+))?/i.exec(c);
    if (married) {
      return fact('relationship', 'speaker.relationship.spouse', married[1] ? `spouse: ${married[1]}` : 'married', married[1] ? `is married to ${married[1]}` : 'is married');
    }
    const family = /\bi have (a|an|one|two|three|four|five|\d+) (kids?|children|sons?|daughters?|sisters?|brothers?|dogs?|cats?|grandchildren)\b/i.exec(c);
    if (family) return fact('relationship', `speaker.family.${slug(family[2]!, 1)}`, `${family[1]} ${family[2]}`, `has ${family[1]} ${family[2]}`);
    return undefined;
  },
  (c) => {
    const m =
      /\bi (?:promise|swear|vow|give you my word)(?: to| that i(?:'ll| will)| i(?:'ll| will))?\s+(.+)/i.exec(c) ??
      /\bi(?:'ll| will) (?:definitely |surely |certainly |totally )?((?:bring|come back|return|help|find|get|give|meet|tell|fix|save|protect|visit|write|call|pay)\b.*)/i.exec(c);
    if (!m) return undefined;
    const what = clean(m[1]!);
    return fact('promise', `speaker.promise.${slug(what, 3)}`, what, `promised to ${what}`, 0.8);
  },
  (c) => {
    const m =
      /\bi (?:just |recently |finally |once |last year |yesterday )?((?:got|lost|won|moved|graduated|broke|finished|started|retired|adopted|survived|climbed|ran|visited|bought|sold|quit|married|divorced|travel(?:l)?ed|sailed|crossed|built|wrote|published)\b.{4,})/i.exec(c) ??
      /\bmy (\w+(?: \w+)? (?:died|passed away|was born|got sick|is sick|got married|graduated))\b/i.exec(c) ??
      /\bi(?:'m| am) (?:originally )?from\s+(.+)/i.exec(c) ??
      /\bi live in\s+(.+)/i.exec(c);
    if (!m) return undefined;
    const what = clean(m[1]!);
    if (/\bi(?:'m| am) (?:originally )?from\b|\bi live in\b/i.test(c)) {
      return fact('event', 'speaker.home', what, `lives in or comes from ${what}`, 0.75);
    }
    if (/^got (?:it|that|this|you|here|lost)\b/i.test(what)) return undefined;
    return fact('event', `speaker.event.${slug(what, 3)}`, what, /^my /i.test(c.trim()) ? `their ${what}` : what, 0.75);
  },

  // --- the world (lore) ---
  (c) => {
    const m =
      /\b(?:did you know(?: that)?|fun fact:?|everyone knows(?: that)?|legend (?:says|has it)(?: that)?|they say(?: that)?|it is said(?: that)?|rumou?r (?:has it|says)(?: that)?)\s+(.+)/i.exec(c) ??
      /^((?:the|a)\s+[a-z]+(?:\s+[a-z]+){0,3}\s+(?:is|was|are|were|has|had|opens|closes|sells|stands|lies)\s+.+)$/i.exec(c);
    if (!m) return undefined;
    const what = clean(m[1]!);
    if (/\b(?:i|i'm|me|my|mine|we|our|you|your)\b/i.test(what)) return undefined;
    const subject = /^(?:the|a)\s+([a-z]+(?:\s+[a-z]+){0,2}?)\s+(?:is|was|are|were|has|had|opens|closes|sells|stands|lies)\b/i.exec(what);
    return fact('world_fact', `world.${slug(subject?.[1] ?? what, 3)}`, what, cap(what), 0.6);
  },
];

/** Clauses of an utterance; facts live in clauses, not whole messages. */
export function clauses(text: string): string[] {
  return (
    text
      .split(CLAUSE_SPLIT)
      // A question states nothing ("What is my dog called?" must not name the dog), unless it is
      // a statement in question form ("Did you know the lighthouse was built in 1820?").
      .filter((c) => !/\?\s*$/.test(c ?? '') || /^\s*(?:did|do) you (?:know|realise|realize)\b/i.test(c ?? ''))
      .map((c) => clean(c ?? ''))
      .filter((c) => c.length >= 3)
  );
}

export class RuleExtractor implements Extractor {
  readonly id = 'rules';

  async extract(episodes: readonly EpisodeInput[]): Promise<Candidate[]> {
    return episodes.flatMap((e) => extractFrom(e));
  }
}

/** Guard inputs only: attempts on the NPC's persona or the world's rules, and (for serialized working memory, which has no single speaker) game details. */
export function guardCandidates(episode: EpisodeInput): Candidate[] {
  const kinds = new Set<CandidateKind>(episode.kind === 'utterance' ? ['persona_rewrite', 'npc_claim', 'world_rule_claim'] : ['persona_rewrite', 'npc_claim', 'world_rule_claim', 'game']);
  return extractFrom(episode).filter((c) => kinds.has(c.kind));
}

/** A clause about neither the speaker nor the NPC: a game detail (a clue) or a fact about the world (lore). */
export function worldFact(clause: string): Omit<Candidate, 'episodeId' | 'participantId' | 'text'> | undefined {
  for (const rule of [RULES[2]!, RULES[RULES.length - 1]!]) {
    const found = rule(clause);
    if (found) return Array.isArray(found) ? found[0] : found;
  }
  return undefined;
}

export function extractFrom(episode: EpisodeInput): Candidate[] {
  const out: Candidate[] = [];
  for (const clause of clauses(episode.text)) {
    for (const rule of RULES) {
      const found = rule(clause);
      if (!found) continue;
      for (const f of Array.isArray(found) ? found : [found]) {
        if (f.value.length === 0) continue;
        out.push({ ...f, episodeId: episode.id, participantId: episode.participantId, text: clause });
      }
      break; // the first rule that matches a clause owns it
    }
  }
  return out;
}
