/* global document, location, sessionStorage, fetch, URLSearchParams -- browser globals (this file runs in the page) */
// The QA inspector: ids, scores, timings and counts behind NPC replies, the audit ledger and its
// verification, clone dry-run manifests and lineage. Every call goes to /inspector/api with the
// operator's admin key (kept in sessionStorage of this tab only). The only text shown is what the
// NPC remembered, beside each memory id of a context window (opened for the operator's admin
// principal by the memory service, which records each read in its audit ledger).

import { $, el } from '/dom.js';

const table = (headers, rows, rowProps = () => ({})) =>
  el(
    'div',
    { class: 'table-wrap' },
    el(
      'table',
      {},
      el('thead', {}, el('tr', {}, headers.map((h) => el('th', { scope: 'col', class: h.num ? 'num' : '' }, h.label ?? h)))),
      el('tbody', {}, rows.map((cells, i) => el('tr', rowProps(i), cells.map((c, j) => el('td', { class: headers[j]?.num ? 'num' : '' }, c))))),
    ),
  );
const code = (text) => el('code', {}, String(text));
const facts = (pairs) => el('dl', { class: 'facts' }, pairs.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));

let key = sessionStorage.getItem('inspector-key');
let engineToken = sessionStorage.getItem('inspector-engine-token');

async function call(method, path, body) {
  const response = await fetch(`/inspector/api${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(engineToken ? { 'x-engine-operator-token': engineToken } : {}),
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new Error(json.error?.message ?? `The inspector answered ${response.status}.`);
    error.code = json.error?.code;
    error.status = response.status;
    throw error;
  }
  return json;
}

async function attempt(work) {
  const box = $('#error');
  box.hidden = true;
  try {
    return await work();
  } catch (error) {
    box.textContent = error.message;
    box.hidden = false;
    if (error.status === 401) signOut();
    return undefined;
  }
}

function signOut() {
  key = null;
  engineToken = null;
  sessionStorage.removeItem('inspector-key');
  sessionStorage.removeItem('inspector-engine-token');
  $('#screen-sign-in').hidden = false;
  $('#screen-inspector').hidden = true;
  $('#sign-out').hidden = true;
  $('#who').textContent = '';
}

function signedIn() {
  $('#screen-sign-in').hidden = true;
  $('#screen-inspector').hidden = false;
  $('#sign-out').hidden = false;
  $('#who').textContent = `operator key ${key.split('_')[1]}`;
  const params = new URLSearchParams(location.hash.slice(1));
  if (params.get('game')) $('#turns-form').gameId.value = params.get('game');
  if (params.get('context')) {
    $('#context-form').contextId.value = params.get('context');
    void explain(params.get('game'), params.get('context'));
  }
}

$('#key-form').addEventListener('submit', (event) => {
  event.preventDefault();
  key = event.currentTarget.key.value.trim();
  engineToken = event.currentTarget.engineToken.value.trim() || null;
  void attempt(async () => {
    await call('POST', '/session');
    sessionStorage.setItem('inspector-key', key);
    if (engineToken) sessionStorage.setItem('inspector-engine-token', engineToken);
    event.target.reset();
    signedIn();
  });
});
$('#sign-out').addEventListener('click', signOut);

// ---- tabs (arrow keys move between them) --------------------------------------------------------

const tabs = [...document.querySelectorAll('[role="tab"]')];
function select(tab) {
  for (const t of tabs) {
    const on = t === tab;
    t.setAttribute('aria-selected', String(on));
    t.tabIndex = on ? 0 : -1;
    $(`#${t.getAttribute('aria-controls')}`).hidden = !on;
  }
  tab.focus();
  if (tab.id === 'tab-ledger') void loadLedger();
}
for (const tab of tabs) {
  tab.addEventListener('click', () => select(tab));
  tab.addEventListener('keydown', (event) => {
    const i = tabs.indexOf(tab);
    if (event.key === 'ArrowRight') select(tabs[(i + 1) % tabs.length]);
    if (event.key === 'ArrowLeft') select(tabs[(i - 1 + tabs.length) % tabs.length]);
  });
}

// ---- NPC reply: the context window it was given ------------------------------------------------

$('#turns-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const gameId = event.currentTarget.gameId.value.trim();
  void attempt(async () => {
    const answer = await call('GET', `/games/${encodeURIComponent(gameId)}/npc-turns`);
    const turns = answer.turns ?? answer;
    $('#turns').replaceChildren(
      ...(turns.length
        ? turns.map((t) =>
            el(
              'li',
              {},
              el(
                'button',
                { type: 'button', class: 'small secondary', dataset: { context: t.contextId }, onclick: () => explain(gameId, t.contextId, t) },
                `reply to #${t.triggerSeq ?? t.seq} · ${t.npcId}${t.roomId ? ` · ${t.roomId}` : ''}`,
              ),
            ),
          )
        : [el('li', { class: 'hint' }, 'No NPC turn in this game yet.')]),
    );
  });
});

$('#context-form').addEventListener('submit', (event) => {
  event.preventDefault();
  void explain($('#turns-form').gameId.value.trim(), event.currentTarget.contextId.value.trim());
});

async function explain(gameId, contextId, turn) {
  if (!gameId) {
    $('#error').textContent = 'Give the game id first: explanations are kept per game.';
    $('#error').hidden = false;
    return;
  }
  $('#context-form').contextId.value = contextId;
  await attempt(async () => {
    const r = await call('GET', `/contexts/${encodeURIComponent(gameId)}/${encodeURIComponent(contextId)}`);
    const memoryRows = Object.entries(r.chosen ?? {}).flatMap(([tier, rows]) => rows.map((row) => ({ tier, ...row })));
    // What was remembered, opened by the memory service for this operator (each read is audited).
    const remembered = await rememberedText(gameId, contextId, memoryRows.length);
    $('#explain').replaceChildren(
      facts([
        ['context', code(r.contextId)],
        ['npc', code(r.npcId)],
        ['room', code(r.roomId)],
        ['state version', code(r.stateVersion)],
        ['tokens', `${r.tokens?.total ?? '?'} of ${r.tokens?.budget ?? '?'}`],
        ['over quota (dropped)', String(r.overQuota ?? 0)],
      ]),
      el('h3', {}, `Memories in the window (${memoryRows.length})`),
      ...(remembered.ledgerSeq ? [el('p', { class: 'hint', id: 'memory-read-audit' }, `Reading this remembered text was recorded in the audit ledger (seq ${remembered.ledgerSeq}).`)] : []),
      memoryRows.length
        ? table(
            ['tier', 'memory id', 'remembered', { label: 'score', num: true }, 'participant'],
            memoryRows.map((m) => [
              m.tier,
              el('code', { class: 'memory-id' }, m.id),
              rememberedCell(remembered, m.id),
              m.score.toFixed(3),
              m.participantId ? code(m.participantId) : '—',
            ]),
          )
        : el('p', { class: 'hint' }, 'No memory was chosen: the NPC answered from procedural memory and the current state.'),
      el('h3', {}, 'Shadowed (not shown to the NPC as current)'),
      r.shadowed?.length ? table(['memory id', 'by', 'reason'], r.shadowed.map((s) => [code(s.id), code(s.by), s.reason])) : el('p', { class: 'hint' }, 'None.'),
      el('h3', {}, 'Uncertain reconstruction'),
      r.reconstruction ? facts([['fragments', r.reconstruction.fragmentIds.join(', ')], ['similarity', r.reconstruction.similarity.toFixed(3)]]) : el('p', { class: 'hint' }, 'None.'),
      ...(turn?.timings
        ? [
            el('h3', {}, 'The NPC turn (engine side, ms)'),
            table(
              Object.keys(turn.timings).map((k) => ({ label: k, num: true })),
              [Object.values(turn.timings).map((v) => Number(v).toFixed(2))],
            ),
            facts([
              ['actions', String(turn.actions?.length ?? 0)],
              ['guard interventions', (turn.guard ?? []).map((g) => g.rule).join(', ') || 'none'],
              ['retried after a refused action', String(Boolean(turn.retried))],
            ]),
          ]
        : []),
      el('h3', {}, 'Context assembly stage timings (memory service, ms)'),
      table(
        Object.keys(r.timingsMs ?? {}).map((k) => ({ label: k, num: true })),
        [Object.values(r.timingsMs ?? {}).map((v) => Number(v).toFixed(2))],
      ),
      el('h3', {}, 'Tokens per section'),
      table(['section', { label: 'tokens', num: true }], Object.entries(r.tokens?.sections ?? {}).map(([k, v]) => [k, String(v)])),
    );
  });
}

/** The memory service's answer for this context's memories: id -> row; an error leaves the ids alone. */
async function rememberedText(gameId, contextId, count) {
  const none = { byId: new Map(), ledgerSeq: null, error: null };
  if (count === 0) return none;
  try {
    const answer = await call('GET', `/contexts/${encodeURIComponent(gameId)}/${encodeURIComponent(contextId)}/memories`);
    return { byId: new Map(answer.memories.map((m) => [m.id, m])), ledgerSeq: answer.ledgerSeq, error: null };
  } catch (error) {
    return { ...none, error: error.message };
  }
}

const REASONS = {
  game_ended: 'unavailable: the game has ended',
  participant_erased: 'unavailable: the participant was erased',
  removed: 'unavailable: no longer stored',
  key_destroyed: 'unavailable: its key was destroyed',
  integrity_failure: 'unavailable: failed authentication',
};

function rememberedCell(remembered, id) {
  const m = remembered.byId.get(id);
  if (!m) return el('span', { class: 'memory-text unavailable', dataset: { memoryId: id } }, remembered.error ? `not shown: ${remembered.error}` : '—');
  if (!m.available) return el('span', { class: 'memory-text unavailable', dataset: { memoryId: id } }, REASONS[m.reason] ?? 'unavailable');
  return el(
    'span',
    { class: 'memory-text', dataset: { memoryId: id } },
    m.remembered,
    ...(m.key ? [' ', el('small', { class: 'hint' }, m.key)] : []),
    ...(m.current ? [] : [' ', el('small', { class: 'hint' }, '(no longer current)')]),
  );
}

// ---- audit ledger ------------------------------------------------------------------------------

async function loadLedger() {
  await attempt(async () => {
    const [{ records }, verdict] = await Promise.all([call('GET', '/audit/records'), call('GET', '/audit/verify')]);
    showVerdict(verdict);
    const bad = new Set((verdict.problems ?? []).map((p) => p.seq).filter((s) => s !== undefined));
    $('#ledger').replaceChildren(
      table(
        [{ label: 'seq', num: true }, 'at', 'action', 'actor', 'subject', 'hash'],
        records.map((r) => [String(r.seq), r.at, r.action, code(r.actor), code(r.subject), code(r.hash.slice(0, 16) + '…')]),
        (i) => (bad.has(records[i].seq) ? { class: 'bad', dataset: { seq: String(records[i].seq) } } : { dataset: { seq: String(records[i].seq) } }),
      ),
    );
  });
}

function showVerdict(verdict) {
  const status = $('#verify-status');
  status.className = `status ${verdict.ok ? 'verified' : 'failed'}`;
  status.dataset.ok = String(verdict.ok);
  status.textContent = verdict.ok
    ? `Verified: ${verdict.records} records, every link checked${verdict.checkpointsChecked ? `, ${verdict.checkpointsChecked} checkpoint(s)` : ''}.`
    : `Verification FAILED: ${verdict.problems.map((p) => `${p.kind}${p.seq === undefined ? '' : ` at seq ${p.seq}`}`).join('; ')}.`;
}

$('#verify').addEventListener('click', () => void attempt(async () => showVerdict(await call('GET', '/audit/verify'))));

// ---- clone dry run -----------------------------------------------------------------------------

$('#clone-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const { from, to } = event.currentTarget;
  void attempt(async () => {
    const answer = await call('POST', '/clones/dry-run', { from: from.value.trim(), to: to.value.trim() });
    const manifest = answer.manifest ?? answer;
    const tiers = ['procedural', 'lore', 'social'];
    const counts = (o) => Object.entries(o ?? {}).map(([k, v]) => [k, String(v)]);
    $('#manifest').replaceChildren(
      facts([
        ['mode', code(manifest.mode)],
        ['operation', code(manifest.operationId)],
        ['from → to', code(`${manifest.source} → ${manifest.target}`)],
        ['actor', code(manifest.actor)],
        ['tool version', code(manifest.toolVersion)],
        ['estimated tokens', `${manifest.tokens?.estimated ?? 0} (${manifest.tokens?.tokenizer ?? '?'})`],
        ['rows cleared', String(manifest.cleared?.total ?? 0)],
        ['rows blocked', String(manifest.blocked?.total ?? 0)],
        ['ledger record', answer.ledger ? `seq ${answer.ledger.seq}` : '—'],
      ]),
      el('h3', {}, 'Cleared to copy, per tier'),
      table(['tier', { label: 'rows', num: true }, { label: 'tokens', num: true }], tiers.map((t) => [t, String(manifest.cleared?.[t] ?? 0), String(manifest.tokens?.byTier?.[t] ?? 0)])),
      el('h3', {}, 'Blocked, per rule and per tier'),
      table(['rule', { label: 'rows', num: true }], counts(manifest.blocked?.byRule)),
      table(['tier', { label: 'rows', num: true }], counts(manifest.blocked?.byTier)),
      el('h3', {}, 'Consent'),
      facts([['tokens checked', String(manifest.consent?.tokensChecked ?? 0)], ['participants consented', String(manifest.consent?.participantsConsented ?? 0)], ...counts(manifest.consent?.byStatus)]),
      ...(manifest.sample?.length
        ? [el('h3', {}, 'Sample of blocked rows'), table(['rule', 'tier', 'row id', 'content'], manifest.sample.map((s) => [s.rule, s.tier, code(s.id), s.preview ?? '']))]
        : []),
      el('details', {}, el('summary', {}, 'The whole manifest (JSON)'), el('pre', { class: 'manifest-json' }, JSON.stringify(manifest, null, 2))),
    );
  });
});

// ---- lineage -----------------------------------------------------------------------------------

$('#lineage-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const id = event.currentTarget.id.value.trim();
  const isOperation = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);
  void attempt(async () => {
    const trace = await call('GET', `/lineage?${isOperation ? 'operation' : 'row'}=${encodeURIComponent(id)}`);
    const columns = trace.rows.length ? Object.keys(trace.rows[0]) : [];
    $('#lineage').replaceChildren(
      facts([
        ['operations', trace.operations.map(String).join(', ') || '—'],
        ['npcs reached', trace.npcs.join(', ') || '—'],
        ['rows', String(trace.rows.length)],
      ]),
      trace.rows.length
        ? table(columns, trace.rows.map((row) => columns.map((c) => (row[c] === null || row[c] === undefined ? '—' : typeof row[c] === 'object' ? JSON.stringify(row[c]) : String(row[c])))))
        : el('p', { class: 'hint' }, 'No row came from this.'),
    );
  });
});

if (key) signedIn();
else signOut();
