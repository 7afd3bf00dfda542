/**
 * Consolidation of one NPC's episodes in one game: read and decrypt the episodes not consolidated
 * yet, extract candidates with no transaction open (a model may take seconds, and PGlite has one
 * connection), then in one transaction: check that no other consolidator took those episodes
 * meanwhile, plan (firewall, poisoning guard, scoring, tiers), write the facts (superseding older
 * facts with the same key, linking the source episodes), log anomalies, apply forgetting, update
 * the session summary, and mark the episodes consolidated. A worker killed mid-job leaves no
 * half-written fact, and the retried job starts from the first episode not marked.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { seal } from '../crypto/cipher.js';
import type { Tx } from '../db/types.js';
import { inScope, setLocal, type Scope } from '../scope.js';
import type { FactInput, MemoryService } from '../service.js';

/** What consolidation needs of the memory service. */
export type ConsolidatorDeps = Pick<MemoryService, 'db' | 'embedder' | 'topics' | 'keys' | 'keysFor' | 'opener' | 'unseal' | 'writeFactIn' | 'writeFactsIn'>;
import { latestProcedural } from '../store/procedural.js';
import type { EpisodeRow, FactRow } from '../store/rows.js';
import { FACT_TIERS, TIER_TABLES, type FactTier } from '../types.js';
import { loadSecrets } from './secrets.js';
import type { Clock } from '../roles.js';
import { plan, type PlannedFact, type PlannedForget } from './classify.js';
import { OpenDomainExtractor } from './extract/open.js';
import { RuleExtractor } from './extract/rules.js';
import { contentLemmas, contentStems, render, tokens, type Token } from '../../language/index.js';
import { SLOT_LEMMAS, fillsSlot, kinNamed, kinOf, slotOf } from '../../language/topics.js';
import { nounSenses, type Sense } from '../../language/senses.js';
import { answerThreshold } from '../context/scoring.js';
import { toVectorLiteral } from '../embeddings/types.js';
import { SINGLE_VALUED, SLOTS, slug, type Candidate, type EpisodeInput, type Extractor } from './extract/types.js';
import { CONFIDENT, chooseTopic, type Topic, type TopicReading } from '../embeddings/topics.js';
import { sameTopic } from '../../language/topics.js';

/** The slots a topic can be read into from meaning (a name only from its words). */
const TOPICS: ReadonlySet<string> = new Set(Object.keys(SLOTS).filter((s) => s !== 'name' && s !== 'open'));
import { isForgotten, type DecayOptions } from './retention.js';
import * as store from './store.js';

export interface ConsolidationReport {
  episodes: number;
  written: Record<FactTier, number>;
  reinforced: number;
  superseded: number;
  anomalies: number;
  forgotten: number;
  dropped: Record<string, number>;
}

export interface ConsolidatorOptions {
  /** The default is the offline open-domain extractor (extract/open.ts). */
  extractor?: Extractor;
  /** Episodes per transaction. (Default: 200) */
  batchSize?: number;
  clock?: Clock;
  decay?: DecayOptions;
  logger?: Logger;
}

/** What one consolidation covers: one NPC's episodes in one game. */
type Target = { tenantId: string; gameId: string; npcId: string };

/** Confidence never grows past this by repetition; a claim never past 0.3. */
const REINFORCE_CAP = 0.95;
/** How much surer a single-valued slot's value must be for a planned value to stand beside it. */
const SURER = 0.15;
const SINGLE_KEYS: ReadonlySet<string> = new Set([...SINGLE_VALUED].map((s) => SLOTS[s]));
const CLAIM_CAP = 0.3;
/** How often an NPC's slow-decay facts are looked at for fading (they fade over months). */
const FADE_EVERY_MS = 60 * 60 * 1000;

export class Consolidator {
  readonly extractor: Extractor;
  /** The guard inputs joined to a model's candidates (persona, world rules, game details). */
  private readonly rules = new RuleExtractor();
  private readonly offline = new OpenDomainExtractor();
  private readonly batchSize: number;
  private readonly clock: Clock;
  /** When the facts of an NPC (and participants) were last looked at for fading, by this consolidator's clock. */
  private readonly fadedAt = new Map<string, number>();

  constructor(
    private readonly service: ConsolidatorDeps,
    private readonly options: ConsolidatorOptions = {},
  ) {
    this.extractor = options.extractor ?? this.offline;
    this.batchSize = options.batchSize ?? 200;
    this.clock = options.clock ?? (() => new Date());
  }

  /** Consolidates every pending episode of (tenant, game, npc), one batch per transaction. */
  async consolidate(target: Target): Promise<ConsolidationReport> {
    const total = emptyReport();
    for (;;) {
      const report = await this.batch(target);
      if (report === 'taken') continue; // another consolidator wrote those episodes first: read again
      merge(total, report);
      if (report.episodes < this.batchSize) return total;
    }
  }

  private async batch(target: Target): Promise<ConsolidationReport | 'taken'> {
    const { tenantId, gameId, npcId } = target;
    const report = emptyReport();
    const base: Scope = { tenantId, gameId, npcId, role: 'runtime' };
    const { rows, episodes } = await inScope(this.service.db, base, async (tx) => {
      const rows = await store.unconsolidatedEpisodes(tx, tenantId, gameId, npcId, this.batchSize);
      return { rows, episodes: rows.length ? this.decrypt(await this.service.keysFor(tx, tenantId, rows), target, rows) : [] };
    });
    if (rows.length === 0) return report;
    const candidates = await this.extract(episodes);
    // Embedded now, before the write transaction opens: inside it the same texts come from the
    // embedder's recent vectors, so the transaction (and its connection, PGlite's only one) is
    // not held while a model or an endpoint works.
    await this.service.embedder.embed([...new Set(candidates.flatMap((c) => [c.summary, ...(c.ends ? [c.ends] : []), ...(c.op === 'forget' && c.value ? [c.value] : [])]))]);
    return inScope(this.service.db, base, async (tx) => {
      // One consolidator per (tenant, game, npc) at a time, whichever worker runs it.
      await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`memory.consolidate:${tenantId}:${gameId}:${npcId}`]);
      if (await store.anyConsolidated(tx, tenantId, gameId, npcId, rows.map((r) => r.id))) return 'taken';
      report.episodes = rows.length;
      const secrets = await loadSecrets(tx, this.service, tenantId, gameId);
      const core = (await latestProcedural(tx, tenantId, npcId))?.core ?? {};
      const planned = plan(candidates, { episodes, secrets, core });
      report.dropped = planned.dropped;

      const participants = [...new Set([...planned.facts.flatMap((f) => (f.participantId ? [f.participantId] : [])), ...planned.forgets.map((f) => f.participantId)])];
      const scope: Scope = { ...base, participantIds: participants };
      await setLocal(tx, { 'memory.participants': participants.join(',') });

      await this.writeFacts(tx, scope, [...planned.facts, ...(await this.sessionSummary(tx, scope, episodes, planned.facts))], report, new Map(episodes.map((e) => [e.id, e.text])));
      for (const anomaly of planned.anomalies) await this.logAnomaly(tx, scope, anomaly.kind, anomaly.coreKey, anomaly.candidate);
      report.anomalies = planned.anomalies.length;
      report.forgotten = (await this.applyForgets(tx, scope, planned.forgets, episodes)) + (await this.forget(tx, scope));
      await store.markConsolidated(tx, tenantId, gameId, npcId, rows.map((r) => r.id));
      this.options.logger?.debug({ tenantId, gameId, npcId, ...report }, 'consolidated');
      return report;
    });
  }

  /** The episodes' text; a shredded or damaged row is left out (there is nothing to learn from it). */
  private decrypt(keys: Map<string, Uint8Array>, { tenantId, gameId, npcId }: Target, rows: readonly EpisodeRow[]): EpisodeInput[] {
    const episodes: EpisodeInput[] = [];
    const opener = this.service.opener(tenantId, keys);
    for (const row of rows) {
      const text = opener.text('episodic', { ...row, game_id: gameId, npc_id: npcId });
      if (text === undefined) continue;
      episodes.push({
        id: row.id,
        gameId,
        npcId,
        roomId: row.room_id,
        participantId: row.participant_id,
        anonymous: row.anonymous ?? false,
        kind: row.kind ?? 'utterance',
        ts: Number(row.ts),
        targeted: row.targeted,
        text,
      });
    }
    return episodes;
  }

  /**
   * A participant's fact gets the topic its meaning reads when its words named none ("Pepper
   * chewed through my charger" -> pet), or when the reading is confident and its words named
   * another (`chooseTopic`: the word lists are often wrong on phrasings they were not written
   * for), so that a question on that topic finds it. Done before slots are compared, so the same
   * fact said again lands on the same key. A model's keys (the LLM extractor) are its own.
   */
  private async topical(facts: readonly PlannedFact[]): Promise<PlannedFact[]> {
    const offline = this.extractor === this.offline;
    const topicOfKey = (key: string) => key.split('.')[1] ?? '';
    const readable = facts.filter((f) => f.tier === 'social' && (topicOfKey(f.key) === topicOfKey(SLOTS.open) || (offline && TOPICS.has(topicOfKey(f.key)))));
    if (readable.length === 0 || !this.service.topics.enabled) return [...facts];
    const read = await this.readTopics(readable.map((f) => f.summary));
    const readingOf = new Map(readable.map((f, i) => [f, read.readings[i]]));
    const words = new Map(readable.map((f, i) => [f, read.words[i]!]));
    const { senses } = read;
    return facts.map((f) => {
      if (!readingOf.has(f)) return f;
      const named = TOPICS.has(topicOfKey(f.key)) ? (topicOfKey(f.key) as Topic) : undefined;
      const chosen = chooseTopic(named, readingOf.get(f), sameTopic);
      // A liking no topic was read from stays a liking.
      const topic = chosen && chosen.topic !== 'other' ? chosen.topic : !named && f.kind === 'preference' ? 'likes' : named;
      if (!topic || topic === named) return f;
      // A single-valued slot has one key, so that the next value of it replaces this one; a fact
      // that names no value of it (a place, a line of work) is kept beside it.
      const rest = f.key.split('.').slice(2).join('.') || slug(f.value, 2);
      // (Only a sure topic replaces a value: named by the words, or a confident reading of meaning.)
      const sure = chosen?.from === 'words' || (readingOf.get(f)?.confidence ?? 0) >= CONFIDENT;
      return { ...f, key: SINGLE_VALUED.has(topic) && sure && fillsSlot(topic, words.get(f)!, senses) ? SLOTS[topic] : `${SLOTS[topic]}.${rest}`, guessedTopic: !sure };
    });
  }

  /** The configured extractor; an LLM's output is joined by the rules' guard inputs, so a secret or a poisoning attempt the model overlooked is still caught. */
  private async extract(episodes: readonly EpisodeInput[]): Promise<Candidate[]> {
    if (this.extractor === this.offline || this.extractor === this.rules) return this.extractor.extract(episodes);
    const [model, rules] = await Promise.all([this.extractor.extract(episodes), this.rules.extract(episodes)]);
    const guarded = rules.filter((c) => c.kind === 'game' || c.kind === 'npc_claim' || c.kind === 'world_rule_claim' || c.kind === 'persona_rewrite');
    const seen = new Set(model.map((c) => `${c.episodeId}\0${c.kind}`));
    return [...model, ...guarded.filter((c) => !seen.has(`${c.episodeId}\0${c.kind}`))];
  }

  private async writeFacts(tx: Tx, scope: Scope, planned: readonly PlannedFact[], report: ConsolidationReport, lines: ReadonlyMap<string, string>): Promise<void> {
    if (planned.length === 0) return;
    const facts = await this.topical(planned);
    // First decide, in order, what each planned fact does to its slot; then embed only the new
    // facts (one call) and write them; repeated facts reinforce their slot once per batch.
    const { steps, reinforce } = decideSteps(facts, await this.currentValues(tx, scope, facts), report);
    for (const [id, r] of reinforce) {
      await store.reinforceFact(tx, r.tier, scope, id, { confidence: r.confidence, importance: r.importance, derivedFrom: [...r.derivedFrom] });
    }
    const vectors = await this.service.embedder.embed(steps.map((s) => s.fact.summary));
    const writtenIds: string[] = [];
    const deferred = new Map<FactTier, { id: string; input: FactInput; vector: Float32Array }[]>();
    const taken = new Set<string>();
    for (const [i, { fact: f, supersedes }] of steps.entries()) {
      let previous = supersedes?.startsWith('pending:') ? writtenIds[Number(supersedes.slice(8))] : supersedes;
      // (Already replaced by an update earlier in this batch: nothing left to supersede.)
      if (previous && taken.has(previous)) previous = undefined;
      let { summary, value } = f;
      let vector = vectors[i]!;
      if (f.tier === 'social' && f.participantId && (f.op === 'update' || (!previous && f.key.startsWith('speaker.')))) {
        const line = f.episodeIds.map((id) => lines.get(id) ?? '').join(' ');
        const sameLine = new Set(writtenIds.filter((_, j) => steps[j]!.fact.episodeIds.some((id) => f.episodeIds.includes(id))));
        // An update ("we've just moved, to Geneva", "not any more, I sold the car") replaces the
        // nearest current fact of its slot even when the keys differ. Any later line that names
        // what an earlier fact named, and something new beside it, tells what became of it
        // ("nibbles passed, we got a kitten called Mochi", "quit deloitte, spotify offered me
        // more"): the earlier fact no longer holds as it was told.
        const [replaced, ...leftBehind] =
          f.op !== 'update' ? await this.namedAgain(tx, scope, f, line, taken, sameLine, { besidesNew: true })
          // (What a lone ending ends is its slot's value or what it names, never a fact merely
          // near it in meaning: "ordering paella, I'm starving" ends nothing.)
          : f.endsOnly ? (previous ? [previous] : await this.namedAgain(tx, scope, f, line, taken, sameLine, { besidesNew: false }))
          : previous ? [previous, ...(await this.saidOfSlot(tx, scope, f, new Set([...taken, previous])))]
          : await this.updated(tx, scope, f, line, vector, new Set(taken), sameLine);
        previous = replaced;
        // What it says of what it replaced is history, kept with the replaced fact: the fact says what is now.
        const before = replaced ? await this.namedIn(tx, scope, f.participantId, [replaced, ...leftBehind]) : new Set<string>();
        const now = replaced ? currentOf(summary, before) : summary;
        // A clause that says only what ended ("I quit deloitte") ends what it names and is no fact
        // of now; one that names what came instead is ("traded in the fiesta for a tesla").
        if (f.endsOnly && replaced && allAmong(summary, before)) {
          report.superseded += await store.invalidateFacts(tx, 'social', scope, [replaced, ...leftBehind]);
          for (const id of [replaced, ...leftBehind]) taken.add(id);
          writtenIds.push(''); // (nothing written: keeps the ids in step with `steps`)
          continue;
        }
        // The rest of what the line leaves behind ("gave up woodworking", said beside "doing archery now") no longer holds.
        if (leftBehind.length > 0) report.superseded += await store.invalidateFacts(tx, 'social', scope, leftBehind);
        for (const id of leftBehind) taken.add(id);
        if (now !== summary) {
          // (A value that was the summary's own words becomes the current part's.)
          const body = (text: string) => stripEnd(text).replace(/^You\s+/, '');
          if (value === stripEnd(summary)) value = stripEnd(now);
          else if (value === body(summary)) value = body(now);
          summary = now;
          vector = (await this.service.embedder.embed([summary]))[0]!;
        }
      }
      if (previous) taken.add(previous);
      const { tier, participantId, key, source, confidence, importance, retention, episodeIds } = f;
      const input = { tier, participantId, key, value, summary, source, confidence, importance, retention, supersedes: previous, derivedFrom: episodeIds };
      if (tier === 'social') writtenIds.push((await this.service.writeFactIn(tx, scope, input, vector)).id);
      else {
        // Nothing later in the batch reads another tier's facts back: they are written together
        // at the end, one statement per tier (a run of a busy game writes dozens of clues).
        const id = randomUUID();
        deferred.set(tier, deferred.get(tier) ?? []).get(tier)!.push({ id, input, vector });
        writtenIds.push(id);
      }
      if (previous) report.superseded++;
      report.written[f.tier]++;
    }
    for (const [tier, batch] of deferred) await this.service.writeFactsIn(tx, scope, tier, batch);
  }

  /** The current value of every slot the facts touch, opened, by `slotKey`. */
  private async currentValues(tx: Tx, scope: Scope, facts: readonly PlannedFact[]): Promise<Map<string, CurrentValue>> {
    const current = new Map<string, CurrentValue>();
    for (const tier of FACT_TIERS) {
      const keys = [...new Set(facts.filter((f) => f.tier === tier).map((f) => f.key))];
      const rows = await store.currentFactsByKey(tx, tier, scope, keys);
      const open = await this.service.keysFor(tx, scope.tenantId, rows);
      for (const row of rows) {
        const value = this.valueOf(open, tier, scope.tenantId, row);
        if (value !== undefined) current.set(slotKey(tier, row.participant_id ?? undefined, row.fact_key), { id: row.id, value, confidence: row.confidence });
      }
    }
    return current;
  }

  /**
   * When an update gives a single-valued slot its new value (a job, a home): the current facts
   * said of the slot beside its old value ("the night shifts at the warehouse are wearing me
   * down"), which were about the old one. Empty for any other fact.
   */
  private async saidOfSlot(tx: Tx, scope: Scope, fact: PlannedFact, skip: ReadonlySet<string>): Promise<string[]> {
    if (!SINGLE_KEYS.has(fact.key) || !fact.participantId) return [];
    const rows = (await store.currentSocialFacts(tx, scope, fact.participantId, `${fact.key}.`)).filter((r) => !skip.has(r.id));
    if (rows.length === 0) return [];
    // Only what is surely about the slot, by its words or a confident reading of its meaning: a
    // fact filed there on a weak reading ("You keep bees on a rooftop in Lyon", read as a home)
    // may be about something else that the slot's new value leaves as it was.
    const topic = fact.key.split('.')[1]!;
    const opener = this.service.opener(scope.tenantId, await this.service.keysFor(tx, scope.tenantId, rows));
    const { words, senses, readings } = await this.readTopics(rows.map((r) => opener.fact('social', { ...r, game_id: null })?.summary ?? ''));
    return rows.filter((_, i) => slotOf(words[i]!, senses).slot === topic || (readings[i]?.topic === topic && readings[i]!.confidence >= CONFIDENT)).map((r) => r.id);
  }

  /** What texts say of their topic: their words, the WordNet senses of their nouns, and the reading of their meaning (none while topics are off). */
  private async readTopics(texts: readonly string[]): Promise<{ words: Token[][]; senses: Map<string, Sense>; readings: (TopicReading | undefined)[] }> {
    const words = texts.map((text) => tokens(text));
    const senses = await nounSenses(words.flat().filter((t) => t.pos === 'NOUN' || t.pos === 'PROPN').map((t) => t.lemma.toLowerCase()));
    const readings = this.service.topics.enabled ? await this.service.topics.classify(await this.service.embedder.embed(texts), 'statement') : texts.map(() => undefined);
    return { words, senses, readings };
  }

  /**
   * The current facts an update replaces, the one it supersedes first: every fact, of any topic,
   * naming something its line names ("gave up woodworking, doing archery now" replaces the fact
   * naming woodworking, and the clause "gave up woodworking" beside it), else the nearest of the
   * same slot, or of any slot when it is very near. `sameLine`: facts just written from the
   * update's own line, which it never replaces this way.
   */
  private async updated(tx: Tx, scope: Scope, fact: PlannedFact, line: string, vector: Float32Array, skip: ReadonlySet<string>, sameLine: ReadonlySet<string>): Promise<string[]> {
    const ofSlot = await this.saidOfSlot(tx, scope, fact, skip);
    if (ofSlot.length > 0) return ofSlot;
    const slot = fact.key.split('.').slice(0, 2).join('.');
    // (A topic only guessed from meaning says nothing of what the update replaces: as if open.)
    const open = slot === SLOTS.open || fact.guessedTopic === true;
    // (Never another fact of its own line: "Montreal is home these days, Austin got too expensive".)
    const candidates = (await store.currentSocialFacts(tx, scope, fact.participantId!, 'speaker.', toVectorLiteral(vector))).filter((r) => !skip.has(r.id) && !sameLine.has(r.id));
    const named = distinctive(`${line} ${fact.summary}`);
    if (named.size > 0 && candidates.length > 0) {
      // (Whatever topic either was filed under: "left the garden centre, I'm a postwoman now"
      // ends the job at the garden centre even when meaning read the new line as a pastime.)
      const keys = await this.service.keysFor(tx, scope.tenantId, candidates);
      const left = candidates.filter((r) => {
        const said = this.summaryOf(keys, r);
        return said !== undefined && [...distinctive(said)].some((w) => named.has(w));
      });
      if (left.length > 0) return left.map((r) => r.id);
    }
    // What the line says ended ("gave up the swimming", "no more running"): the current fact
    // nearest to it in meaning, whatever its topic ("You swim every morning before work").
    // Near in meaning is not enough alone: "coffee" is near a shift at the bakery. The fact must
    // also name something of what ended ("the swimming", "You swim"), unless it is very near.
    if (fact.ends) {
      const [ended] = await this.service.embedder.embed([fact.ends]);
      const similarity = (r: { distance: number | null }) => (r.distance === null ? -1 : 1 - Number(r.distance));
      // (Nearest first; only those near enough are opened.)
      const rows = (await store.currentSocialFacts(tx, scope, fact.participantId!, 'speaker.', toVectorLiteral(ended!))).filter((r) => !skip.has(r.id) && !sameLine.has(r.id) && similarity(r) >= ENDED_SIMILARITY);
      const keys = await this.service.keysFor(tx, scope.tenantId, rows);
      const telling = (text: string) => contentStems(text).filter((l) => l.length > 2 && !LIGHT_WORDS.has(l));
      const what = new Set(telling(fact.ends));
      const names = (r: FactRow) => telling(this.summaryOf(keys, r) ?? '').some((l) => what.has(l));
      const nearest = rows.find((r) => similarity(r) >= UPDATE_SIMILARITY_ANY_SLOT || names(r));
      if (nearest) return [nearest.id];
    }
    const rows = open ? candidates : candidates.filter((r) => r.fact_key.startsWith(slot));
    const similar = (r: { distance: number | null }) => r.distance !== null && 1 - Number(r.distance) >= (open ? UPDATE_SIMILARITY_ANY_SLOT : UPDATE_SIMILARITY_SAME_SLOT);
    const nearest = rows.find((r) => similar(r));
    return nearest ? [nearest.id] : [];
  }

  /** What the facts named (their distinctive words), as told. */
  private async namedIn(tx: Tx, scope: Scope, participantId: string, ids: readonly string[]): Promise<Set<string>> {
    const rows = (await store.currentSocialFacts(tx, scope, participantId, '')).filter((r) => ids.includes(r.id));
    const keys = await this.service.keysFor(tx, scope.tenantId, rows);
    return new Set(rows.flatMap((r) => [...distinctive(this.summaryOf(keys, r) ?? '')]));
  }

  /**
   * The speaker's current facts, from earlier lines, that name something the line names (a name,
   * not a common noun), and with `besidesNew`, only when the fact names something they did not
   * (what the line adds beside what it takes up again).
   * Not where they come from: a line naming their home town ("left Glasgow in March") says
   * where they went, and they still come from there.
   */
  private async namedAgain(tx: Tx, scope: Scope, fact: PlannedFact, line: string, skip: ReadonlySet<string>, sameLine: ReadonlySet<string>, { besidesNew }: { besidesNew: boolean }): Promise<string[]> {
    const named = distinctive(`${line} ${fact.summary}`);
    if (named.size === 0) return [];
    const candidates = (await store.currentSocialFacts(tx, scope, fact.participantId!, 'speaker.')).filter(
      (r) => !skip.has(r.id) && !sameLine.has(r.id) && !r.derived_from.some((id) => fact.episodeIds.includes(id)) && !sameTopic(r.fact_key.split('.')[1] ?? '', 'origin'),
    );
    if (candidates.length === 0) return [];
    const keys = await this.service.keysFor(tx, scope.tenantId, candidates);
    const said = new Map(candidates.map((r) => [r.id, this.summaryOf(keys, r) ?? ''] as const));
    // (What a name names, not a common noun: "nerd" in "paramedic by trade, puzzle nerd by night"
    // and "my sister thinks I'm a nerd" is no one thing the two speak of.)
    const names = await namesIn([line, fact.summary, ...said.values()]);
    return candidates
      .filter((r) => {
        const before = distinctive(said.get(r.id)!);
        return [...before].some((w) => named.has(w) && names.has(w)) && (!besidesNew || !allAmong(fact.summary, before));
      })
      .map((r) => r.id);
  }

  /**
   * A speaker's requests to forget: their current facts that speak of what they named ("forget
   * what I said about my husband": every fact mentioning the husband), or, for "scrap that", the
   * last fact they told. Each is invalidated, as an erasure of that one memory.
   */
  private async applyForgets(tx: Tx, scope: Scope, forgets: readonly PlannedForget[], episodes: readonly EpisodeInput[]): Promise<number> {
    // Facts written in this transaction share one created_at: "what they said last" is told by the episodes' order.
    const order = new Map(episodes.map((e, i) => [e.id, i]));
    let n = 0;
    for (const f of forgets) {
      // Nearest to what they named first (by meaning), when they named something.
      const vector = f.about ? toVectorLiteral((await this.service.embedder.embed([f.about]))[0]!) : undefined;
      // What was said before the request, as it stood before this batch (a fact the request's
      // own line replaced is still what "scrap that, we moved to Geneva" is about), and not what
      // the request's line, or a later one, told.
      const at = order.get(f.episodeId) ?? Infinity;
      const before = await store.currentSocialFacts(tx, scope, f.participantId, '', vector, { orSupersededNow: true });
      const rows = before.filter((r) => r.derived_from.some((id) => (order.get(id) ?? -1) < at));
      if (rows.length === 0) continue;
      const keys = await this.service.keysFor(tx, scope.tenantId, rows);
      const wanted = new Set(contentLemmas(f.about));
      // "My sibling" is not "my husband": a family fact of another relation is not what they named.
      const kin = kinNamed(tokens(f.about));
      const named = rows.filter((r) => !kin || !kinOf(r.fact_key.split('.')[2]) || kinOf(r.fact_key.split('.')[2]) === kin);
      let ids: string[];
      if (wanted.size === 0) {
        const position = (r: FactRow) => Math.max(-1, ...r.derived_from.map((id) => order.get(id) ?? -1).filter((i) => i < at));
        const inBatch = rows.filter((r) => position(r) >= 0).sort((a, b) => position(b) - position(a));
        // What they said last: every fact of that line (a clause can give two: "I keep bees in
        // Lyon" is a pastime and a home).
        const said = inBatch[0] ? episodes[position(inBatch[0])]!.id : rows[0]!.derived_from.at(-1);
        ids = rows.filter((r) => said !== undefined && r.derived_from.includes(said)).map((r) => r.id);
      } else {
        ids = named
          .filter((r) => {
            const summary = this.summaryOf(keys, r);
            return (f.key && r.fact_key.startsWith(f.key) && summary !== undefined && contentLemmas(summary).some((l) => wanted.has(l))) || (summary !== undefined && contentLemmas(summary).some((l) => wanted.has(l)));
          })
          .map((r) => r.id);
        // No word in common: the nearest fact of the topic they named, else the nearest fact if it
        // is as close as an answer to a question would be.
        if (ids.length === 0 && f.key) ids = named.filter((r) => r.fact_key.startsWith(f.key)).slice(0, 1).map((r) => r.id);
        const bar = answerThreshold(this.service.embedder.id);
        if (ids.length === 0 && named[0]?.distance != null && 1 - named[0].distance >= bar) ids = [named[0].id];
      }
      n += await store.invalidateFacts(tx, 'social', scope, ids);
    }
    return n;
  }

  private summaryOf(keys: Map<string, Uint8Array>, row: FactRow): string | undefined {
    const body = this.service.opener(row.tenant_id, keys).fact('social', { ...row, game_id: null });
    return body && `${body.summary} ${body.value}`;
  }

  /**
   * Old episodes summarized, major events kept: one game-bound fact ('session.summary', clue
   * tier, expires with the game) superseded at every batch, counting the messages consolidated
   * so far and listing the most important facts of the session in the third person. Retrieval
   * can show it instead of old raw episodes; major events also live on as their own facts.
   */
  private async sessionSummary(tx: Tx, scope: Scope, episodes: readonly EpisodeInput[], facts: readonly PlannedFact[]): Promise<PlannedFact[]> {
    const utterances = episodes.filter((e) => e.kind === 'utterance');
    if (utterances.length === 0) return [];
    const [previous] = await store.currentFactsByKey(tx, 'clue', scope, [SUMMARY_KEY]);
    let state: SessionSummary = { messages: 0, notable: [] };
    let derived: string[] = [];
    if (previous) {
      const value = this.valueOf(await this.service.keysFor(tx, scope.tenantId, [previous]), 'clue', scope.tenantId, previous);
      if (value) state = JSON.parse(value) as SessionSummary;
      derived = previous.derived_from;
    }
    // Game events only: the summary is a clue every participant of the game may hear, so a
    // participant's personal facts (social tier) never enter it.
    const major = facts.filter((f) => f.importance >= 0.75 && (f.tier === 'clue' || f.tier === 'lore')).map((f) => f.summary);
    state = { messages: state.messages + utterances.length, notable: [...new Set([...state.notable, ...major])].slice(-12) };
    const summary = `${state.messages} messages so far${state.notable.length ? `; notable: ${state.notable.join('; ')}` : ''}`;
    return [
      {
        tier: 'clue',
        key: SUMMARY_KEY,
        value: JSON.stringify(state),
        summary: summary.slice(0, 2000),
        source: 'npc_observation',
        confidence: 1,
        importance: 0.3,
        retention: 'session_only',
        episodeIds: [...new Set([...derived, ...episodes.map((e) => e.id)])],
        kind: 'event',
      },
    ];
  }

  private valueOf(keys: Map<string, Uint8Array>, tier: FactTier, tenantId: string, row: FactRow): string | undefined {
    return this.service.opener(tenantId, keys).fact(tier, row)?.value;
  }

  /** Sealed under the npc key: reviewers with an admin key for the npc can read it back. */
  private async logAnomaly(tx: Tx, scope: Scope, kind: string, coreKey: string | null, c: Candidate): Promise<void> {
    const { keyId, key } = await this.service.keys.forWrite(tx, scope.tenantId, 'npc', scope.npcId!);
    const id = randomUUID();
    const body = JSON.stringify({ claim: c.text, value: c.value, key: c.key });
    await store.insertAnomaly(tx, {
      id,
      tenantId: scope.tenantId,
      npcId: scope.npcId!,
      gameId: scope.gameId!,
      participantId: c.participantId,
      episodeId: c.episodeId,
      kind,
      coreKey,
      textHash: createHash('sha256').update(c.value.toLowerCase().replace(/\s+/g, ' ').trim()).digest('hex'),
      keyId,
      ciphertext: seal(key, Buffer.from(body, 'utf8'), anomalyAad(scope.tenantId, scope.npcId!, id)),
    });
  }

  /**
   * Forgetting at consolidation: slow-decay facts in this scope that faded away are invalidated.
   * Fading takes months (retention.ts), so an NPC's facts are looked at once per FADE_EVERY_MS of
   * this consolidator's clock, not at every run of a busy game; its participants' facts, at every
   * run that names them.
   */
  private async forget(tx: Tx, scope: Scope): Promise<number> {
    const now = this.clock().getTime();
    const key = `${scope.tenantId}\0${scope.npcId}\0${[...(scope.participantIds ?? [])].sort().join(',')}`;
    const last = this.fadedAt.get(key);
    if (last !== undefined && now - last >= 0 && now - last < FADE_EVERY_MS) return 0;
    if (this.fadedAt.size >= 10_000) this.fadedAt.clear();
    this.fadedAt.set(key, now);
    let n = 0;
    // (A game's tiers are not faded: they go with the game.)
    for (const tier of FACT_TIERS.filter((t) => !TIER_TABLES[t].gameBound)) {
      const rows = await store.decayingFacts(tx, tier, scope);
      const faded = rows.filter((r) => isForgotten('slow_decay', now - new Date(r.updated_at).getTime(), r.importance, this.options.decay)).map((r) => r.id);
      n += await store.invalidateFacts(tx, tier, scope, faded);
    }
    return n;
  }
}

/**
 * A summary without its parts (as punctuation parts it) that name what it replaced ("Sad news,
 * nibbles passed :( you got a kitten, her name's Mochi" -> "Sad news, you got a kitten, her name's
 * Mochi"), when what is left still names something.
 */
export function currentOf(summary: string, replaced: ReadonlySet<string>): string {
  // (Parts as punctuation marks them, finer than clauses: "nibbles passed :(" stands apart.)
  const parts: Token[][] = [[]];
  for (const t of tokens(summary)) {
    if (t.pos === 'PUNCT' || t.pos === 'SYM') parts.push([]);
    else parts.at(-1)!.push(t);
  }
  const said = parts.filter((p) => p.length > 0);
  const kept = said.filter((p) => !p.some((t) => replaced.has(t.lemma) || replaced.has(t.lower)));
  // (Unless what is left names nothing: "you swapped the violin for the ukulele, much more chill".)
  if (kept.length === said.length || !kept.some((p) => distinctiveWords(render(p)).length > 0)) return summary;
  const text = kept.map((p) => render(p)).join(', ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}
const stripEnd = (s: string) => s.replace(/[\s.!?]+$/, '');

/**
 * The words of the texts that are names: written with a capital inside a sentence ("Nibbles",
 * "St Mary's"), or unknown to WordNet as a noun ("deloitte", "crossfit"); as lemmas.
 */
async function namesIn(texts: readonly string[]): Promise<Set<string>> {
  const all = texts.flatMap((t) => tokens(t).filter((x) => x.pos === 'NOUN' || x.pos === 'PROPN'));
  const known = await nounSenses(all.map((x) => x.lemma.toLowerCase()));
  const capital = new Set(texts.flatMap((t) => tokens(t).filter((x, i, xs) => i > 0 && /^\p{Lu}/u.test(x.text) && !/[.!?]/.test(xs[i - 1]!.text)).map((x) => x.lower)));
  const name = (x: Token) => capital.has(x.lower) || !known.has(x.lemma.toLowerCase()) || known.get(x.lemma.toLowerCase())?.place !== undefined;
  return new Set(all.filter(name).flatMap((x) => [x.lemma, x.lower]));
}

const SUMMARY_KEY = 'session.summary';
/**
 * The words of a fact that tell it from others of its topic: its nouns and names, not the words
 * every fact of a topic shares (topic words, "thing", "time") nor the verbs around them.
 */
function distinctive(text: string): Set<string> {
  // (By lemma and as written: "Nibbles" the hamster is "nibbles" in lowercase, which reads as a plural.)
  return new Set(distinctiveWords(text).flatMap((t) => [t.lemma, t.lower]));
}
const distinctiveWords = (text: string) => tokens(text).filter((t) => (t.pos === 'NOUN' || t.pos === 'PROPN') && t.lemma.length > 2 && !TOPIC_WORDS.has(t.lemma) && !COMMON_NOUNS.has(t.lemma));
/** Whether each word of the text that tells it from others is among `words` (by lemma or as written); false for none. */
const allAmong = (text: string, words: ReadonlySet<string>) => {
  const told = distinctiveWords(text);
  return told.length > 0 && told.every((t) => words.has(t.lemma) || words.has(t.lower));
};
const TOPIC_WORDS = new Set(SLOT_LEMMAS.flatMap(([, words]) => words));
const COMMON_NOUNS = new Set(['thing', 'stuff', 'time', 'day', 'week', 'year', 'month', 'night', 'morning', 'life', 'lot', 'way', 'bit', 'fun', 'fact', 'game', 'room', 'people', 'friend']);
/** How near (cosine) an update must be to the fact it replaces: in its own slot, and across slots. */
const UPDATE_SIMILARITY_SAME_SLOT = 0.3;
const UPDATE_SIMILARITY_ANY_SLOT = 0.5;
/**
 * How near (cosine) what an update's line says ended must be to the fact it replaces: "gave up the
 * swimming" ~ "You swim every morning before work" 0.49, "no more running" ~ "You run marathons"
 * 0.39, "the pickup died" ~ "drive a Toyota pickup for the farm" 0.38; against other facts of the
 * same speaker 0.06-0.32 ("no more running" ~ "You swim every morning before work" 0.32).
 */
const ENDED_SIMILARITY = 0.35;
/** Words nearly every line of a change has: sharing one says nothing of what two lines are about. */
const LIGHT_WORDS = new Set(['be', 'have', 'do', 'get', 'go', 'make', 'take', 'got', 'now', 'more', 'long', 'anymor']);
interface SessionSummary {
  messages: number;
  notable: string[];
}

export const anomalyAad = (tenantId: string, npcId: string, id: string) => ['anomaly', tenantId, npcId, id].join('\0');

const sameValue = (a: string, b: string) => norm(a) === norm(b);
const norm = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim();

function emptyReport(): ConsolidationReport {
  return { episodes: 0, written: { clue: 0, social: 0, lore: 0, fragment: 0 }, reinforced: 0, superseded: 0, anomalies: 0, forgotten: 0, dropped: {} };
}

function merge(into: ConsolidationReport, from: ConsolidationReport): void {
  into.episodes += from.episodes;
  for (const t of Object.keys(into.written) as FactTier[]) into.written[t] += from.written[t];
  into.reinforced += from.reinforced;
  into.superseded += from.superseded;
  into.anomalies += from.anomalies;
  into.forgotten += from.forgotten;
  for (const [k, v] of Object.entries(from.dropped)) into.dropped[k] = (into.dropped[k] ?? 0) + v;
}

/** A slot: a tier, a participant (for social facts) and a key. */
const slotKey = (tier: FactTier, participantId: string | undefined, key: string) => `${tier}\0${participantId ?? ''}\0${key}`;

interface CurrentValue {
  id: string;
  value: string;
  confidence: number;
}

/** A fact to write, and what it replaces: a stored fact's id, or `pending:<i>` for the i-th fact written before it. */
interface Step {
  fact: PlannedFact;
  supersedes?: string;
}

interface Reinforcement {
  tier: FactTier;
  confidence: number;
  importance: number;
  derivedFrom: Set<string>;
}

/**
 * What each planned fact does to its slot, in order: the same value again reinforces it (once per
 * batch, carrying both episodes), a less sure value of a single-valued slot stands beside it, any
 * other value replaces it. Decides only; nothing is written.
 */
function decideSteps(facts: readonly PlannedFact[], current: ReadonlyMap<string, CurrentValue>, report: ConsolidationReport): { steps: Step[]; reinforce: Map<string, Reinforcement> } {
  const steps: Step[] = [];
  const reinforce = new Map<string, Reinforcement>();
  const pending = new Map<string, { value: string; confidence: number; step?: Step; id?: string }>();
  for (const [key, c] of current) pending.set(key, { value: c.value, confidence: c.confidence, id: c.id });
  for (const f of facts) {
    const key = slotKey(f.tier, f.participantId, f.key);
    const existing = pending.get(key);
    if (existing && sameValue(existing.value, f.value)) {
      const cap = f.kind === 'claim' ? CLAIM_CAP : REINFORCE_CAP;
      existing.confidence = Math.min(cap, Math.max(existing.confidence, f.confidence) + 0.05);
      if (existing.step) {
        // Heard twice in this batch: the fact about to be written carries both episodes.
        existing.step.fact = { ...existing.step.fact, confidence: existing.confidence, episodeIds: [...new Set([...existing.step.fact.episodeIds, ...f.episodeIds])] };
      } else {
        const r = reinforce.get(existing.id!) ?? { tier: f.tier, confidence: 0, importance: 0, derivedFrom: new Set<string>() };
        r.confidence = existing.confidence;
        r.importance = Math.max(r.importance, f.importance);
        for (const id of f.episodeIds) r.derivedFrom.add(id);
        reinforce.set(existing.id!, r);
      }
      report.reinforced++;
      continue;
    }
    // A value less sure than the slot's own (read from how a line was put, not said as the
    // slot's value) stands beside it instead of replacing it; an update replaces it.
    if (existing && f.op !== 'update' && f.confidence < existing.confidence - SURER && SINGLE_KEYS.has(f.key)) {
      steps.push({ fact: { ...f, key: `${f.key}.${slug(f.value, 2)}` } });
      continue;
    }
    const step: Step = { fact: f, supersedes: existing?.step ? `pending:${steps.indexOf(existing.step)}` : existing?.id };
    steps.push(step);
    pending.set(key, { value: f.value, confidence: f.confidence, step });
  }
  return { steps, reinforce };
}
