/* global document, location, history, navigator, sessionStorage, URLSearchParams, setTimeout, clearTimeout -- browser globals (this file runs in the page) */
// The play page: sign in (or play anonymously), create or join a game, and the room view with
// its ordered stream. State lives in sessionStorage, so a reload resumes the same game.
import { api, ApiError, openStream } from './api.js';
import { startVoice } from './voice.js';
import { $, el } from './dom.js';


const saved = JSON.parse(sessionStorage.getItem('escape-room') ?? '{}');
const state = {
  token: saved.token ?? null,
  displayName: saved.displayName ?? null,
  signedIn: saved.signedIn ?? false,
  gameId: saved.gameId ?? null,
  stream: null,
  voice: null,
  view: null,
  npcNames: new Map(),
};
const persist = () =>
  sessionStorage.setItem('escape-room', JSON.stringify({ token: state.token, displayName: state.displayName, signedIn: state.signedIn, gameId: state.gameId }));

// ---- errors and screens ----------------------------------------------------------------------

function showError(error) {
  const box = $('#error');
  if (!error) {
    box.hidden = true;
    box.textContent = '';
    return;
  }
  box.textContent = error instanceof ApiError || error instanceof Error ? error.message : String(error);
  box.hidden = false;
}

async function attempt(work) {
  showError(null);
  try {
    return await work();
  } catch (error) {
    if (error instanceof ApiError && error.code === 'INVALID_SESSION') {
      forgetSession();
      show('sign-in');
    }
    showError(error);
    return undefined;
  }
}

function show(screen) {
  for (const s of document.querySelectorAll('.screen')) s.hidden = s.id !== `screen-${screen}`;
  const signedIn = Boolean(state.token);
  $('#sign-out').hidden = !signedIn;
  $('#who').textContent = signedIn ? `${state.displayName}${state.signedIn ? '' : ' (anonymous)'}` : '';
  document.body.dataset.screen = screen;
  const focus = { 'sign-in': '#sign-in-form input', lobby: '#create-game', room: '#say-text' }[screen];
  $(focus)?.focus();
}

function forgetSession() {
  leaveRoomView();
  state.token = null;
  state.displayName = null;
  state.gameId = null;
  persist();
}

// ---- sign in ---------------------------------------------------------------------------------

$('#sign-in-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const mode = event.submitter?.value ?? 'sign-in';
  const username = form.username.value.trim();
  const password = form.password.value;
  void attempt(async () => {
    if (mode === 'sign-up') await api.signUp(username, password);
    const opened = await api.signIn(username, password);
    signedIn(opened, true);
  });
});

$('#anon-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const name = event.currentTarget.displayName.value.trim();
  void attempt(async () => signedIn(await api.anonymous(name || undefined), false));
});

function signedIn(opened, account) {
  state.token = opened.token;
  state.displayName = opened.displayName;
  state.signedIn = account;
  persist();
  const wanted = new URLSearchParams(location.hash.slice(1)).get('game');
  if (wanted) void enterGame(wanted);
  else show('lobby');
}

$('#sign-out').addEventListener('click', () => {
  const token = state.token;
  forgetSession();
  show('sign-in');
  if (token) void api.signOut(token).catch(() => {});
});

// ---- lobby -----------------------------------------------------------------------------------

$('#create-game').addEventListener('click', () =>
  attempt(async () => {
    const { gameId } = await api.createGame(state.token);
    await enterGame(gameId);
  }),
);

$('#join-form').addEventListener('submit', (event) => {
  event.preventDefault();
  void enterGame(event.currentTarget.gameId.value.trim());
});

for (const form of document.querySelectorAll('.front-desk')) {
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const answer = $('.desk-answer', form);
    answer.textContent = '';
    answer.className = 'desk-answer';
    const fullName = form.fullName.value.trim();
    void api
      .frontDesk(state.token, fullName, undefined)
      .then((found) => {
        const here = found.whereabouts.find((w) => w.gameId === state.gameId);
        const rooms = state.view ? new Map(state.view.roster.map((n) => [n.npcId, n.roomName])) : new Map();
        answer.classList.add('ok');
        answer.textContent = here
          ? `${found.npc.fullName} is in ${rooms.get(found.npc.npcId) ?? here.roomId} in this game. Walk there to talk to ${found.npc.first}.`
          : found.whereabouts.length
            ? `${found.npc.fullName} is in ${found.whereabouts.length} running game(s); create or join one to meet ${found.npc.first}.`
            : `${found.npc.fullName} is registered but in no running game right now.`;
      })
      .catch((error) => {
        answer.classList.add('bad');
        answer.textContent = error instanceof ApiError && error.code === 'CHARACTER_NOT_RECOGNIZED' ? 'Character not recognized' : error.message;
      });
  });
}

// ---- the room --------------------------------------------------------------------------------

async function enterGame(gameId) {
  await attempt(async () => {
    try {
      await api.join(state.token, gameId);
    } catch (error) {
      if (!(error instanceof ApiError && error.code === 'ALREADY_IN_GAME')) throw error;
    }
    leaveRoomView();
    state.gameId = gameId;
    persist();
    history.replaceState(null, '', `#game=${encodeURIComponent(gameId)}`);
    $('#game-id').textContent = gameId;
    $('#stream').replaceChildren();
    show('room');
    await refreshRoom();
    state.stream = openStream(state.token, gameId, {
      onEntry: addEntry,
      onClosed: (reason, message) => {
        const ending = message?.memory === 'closing' ? ' The characters are still closing their memory of it.' : '';
        addLocal(reason === 'ended' ? `The game has ended.${ending}` : reason === 'left' ? 'You left the game.' : `The stream closed (${reason}).`);
      },
      onState: (s) => document.body.setAttribute('data-stream', s),
    });
  });
}

function leaveRoomView() {
  state.stream?.close();
  state.stream = null;
  state.voice?.stop();
  state.voice = null;
  updateVoiceButton();
}

function npcName(npcId) {
  return state.npcNames.get(npcId) ?? npcId;
}

function addEntry(entry, cursor) {
  const targeted = entry.targets.length > 0;
  const speaker = entry.speaker;
  const classes = [entry.kind === 'event' ? 'event' : 'say', speaker.kind === 'npc' ? 'npc' : '', targeted ? 'targeted' : ''].filter(Boolean).join(' ');
  const to = entry.targets.map((id) => npcName(id).split(' ')[0]).join(', ');
  const item = el(
    'li',
    { class: classes, dataset: { cursor: String(cursor), seq: String(entry.seq), room: entry.roomId, speakerKind: speaker.kind, ...(speaker.kind === 'npc' ? { npc: speaker.npcId } : {}) } },
    el('span', { class: 'seq', 'aria-hidden': 'true' }, `#${entry.seq}`),
    targeted ? el('span', { class: 'marker', 'aria-label': `addressed to ${to}` }, `→ ${to}`) : null,
    speaker.kind === 'narrator' ? null : el('span', { class: 'speaker' }, `${speaker.displayName}:`),
    el('span', { class: 'text' }, entry.text),
  );
  const list = $('#stream');
  list.append(item);
  list.scrollTop = list.scrollHeight;
  if (entry.kind === 'event') scheduleRefresh();
}

function addLocal(text) {
  $('#stream').append(el('li', { class: 'event local' }, el('span', { class: 'text' }, text)));
}

let refreshTimer = null;
function scheduleRefresh() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => void refreshRoom(), 60);
}

async function refreshRoom() {
  if (!state.gameId || !state.token) return;
  let view;
  try {
    view = await api.room(state.token, state.gameId);
  } catch (error) {
    if (error instanceof ApiError && ['GAME_ENDED', 'NOT_IN_GAME', 'UNKNOWN_GAME'].includes(error.code)) return;
    showError(error);
    return;
  }
  state.view = view;
  for (const n of view.roster) state.npcNames.set(n.npcId, n.name);
  document.title = `${view.roomName} · ${view.title}`;
  $('#room-name').textContent = capitalize(view.roomName);
  $('#room-description').textContent = view.description;
  $('#present').replaceChildren(...view.present.map((p) => el('li', {}, p.you ? `${p.displayName} (you)` : p.displayName)));
  $('#npcs-here').replaceChildren(
    ...view.npcs.map((n) => el('li', { class: 'npc', dataset: { npc: n.npcId } }, `${n.name.split(' ')[0]}`, n.state === 'active' ? '' : ` (${n.state})`)),
  );
  const target = $('#say-target');
  const chosen = target.value;
  target.replaceChildren(el('option', { value: '' }, 'Everyone'), ...view.npcs.map((n) => el('option', { value: n.npcId }, `To ${n.name.split(' ')[0]}`)));
  target.value = view.npcs.some((n) => n.npcId === chosen) ? chosen : '';

  $('#exits').replaceChildren(
    ...view.exits.map((direction) =>
      el(
        'li',
        {},
        el('span', {}, direction),
        el('button', { type: 'button', class: 'small', 'aria-label': `Go ${direction}`, onclick: () => act({ type: 'move', direction }) }, 'Go'),
        el('button', { type: 'button', class: 'small secondary', 'aria-label': `Unlock ${direction}`, onclick: () => act({ type: 'unlock', direction }) }, 'Unlock'),
      ),
    ),
  );
  const itemRow = (item, verb) =>
    el(
      'li',
      {},
      el('span', {}, item.name),
      el('button', { type: 'button', class: 'small', 'aria-label': `${verb} ${item.name}`, onclick: () => act({ type: verb.toLowerCase(), item: item.id }) }, verb),
    );
  $('#items').replaceChildren(...(view.items.length ? view.items.map((i) => itemRow(i, 'Take')) : [el('li', { class: 'hint' }, 'Nothing to pick up.')]));
  $('#carrying').replaceChildren(...(view.carrying.length ? view.carrying.map((i) => itemRow(i, 'Drop')) : [el('li', { class: 'hint' }, 'Nothing.')]));
  // Redrawn on every event in the room: an answer being typed survives it, with its focus and caret.
  const typing = new Map([...$('#puzzles').querySelectorAll('form.puzzle')].map((f) => [f.dataset.puzzle, f.answer]));
  const focused = document.activeElement?.closest?.('#puzzles form.puzzle')?.dataset.puzzle;
  $('#puzzles').replaceChildren(
    ...(view.puzzles.length
      ? view.puzzles.map((p) => {
          const id = `answer-${p.id}`;
          return el(
            'form',
            {
              class: 'puzzle',
              dataset: { puzzle: p.id },
              onsubmit: (event) => {
                event.preventDefault();
                const answer = event.currentTarget.answer.value.trim();
                if (answer) void act({ type: 'solve', puzzle: p.id, answer });
              },
            },
            el('p', {}, p.prompt),
            el('label', { for: id, class: 'visually-hidden' }, `Answer for ${p.name}`),
            el('div', { class: 'row' }, el('input', { id, name: 'answer', required: true, maxlength: '200', autocomplete: 'off', class: 'grow' }), el('button', { type: 'submit', class: 'small' }, 'Try')),
          );
        })
      : [el('p', { class: 'hint' }, 'No open puzzle here.')]),
  );
  for (const form of $('#puzzles').querySelectorAll('form.puzzle')) {
    const before = typing.get(form.dataset.puzzle);
    if (!before) continue;
    form.answer.value = before.value;
    if (form.dataset.puzzle === focused) {
      form.answer.focus();
      form.answer.setSelectionRange(before.selectionStart, before.selectionEnd);
    }
  }
  $('#roster').replaceChildren(
    ...view.roster.map((n) =>
      el(
        'li',
        { dataset: { npc: n.npcId, state: n.state } },
        el('span', {}, `${n.name} · ${n.roomName}`),
        el('span', { class: `state ${n.state}`, title: n.state === 'suspended' ? 'No player is with this character; it is paused until someone comes back.' : '' }, n.state),
      ),
    ),
  );
}

async function act(action) {
  const result = await attempt(() => api.act(state.token, state.gameId, action));
  if (!result) return;
  // A move's narration is the new room's description, already shown above the stream.
  if (!(result.ok && action.type === 'move')) addLocal(result.ok ? result.narration : result.failure);
  scheduleRefresh();
}

$('#say-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const input = $('#say-text');
  const text = input.value.trim();
  if (!text) return;
  const target = $('#say-target').value || undefined;
  void attempt(async () => {
    await api.say(state.token, state.gameId, text, target);
    input.value = '';
  });
});

$('#copy-game').addEventListener('click', () => {
  const link = `${location.origin}/#game=${encodeURIComponent(state.gameId)}`;
  void navigator.clipboard?.writeText(link).then(
    () => ($('#copy-game').textContent = 'Copied link'),
    () => ($('#copy-game').textContent = 'Copy failed'),
  );
});

$('#leave-game').addEventListener('click', () =>
  attempt(async () => {
    const gameId = state.gameId;
    leaveRoomView();
    state.gameId = null;
    persist();
    history.replaceState(null, '', '/');
    show('lobby');
    await api.leave(state.token, gameId).catch(() => {});
  }),
);

// ---- voice (humans only; src/voice relays the WebRTC signaling, audio goes browser to browser) ----

function updateVoiceButton() {
  const button = $('#voice-toggle');
  button.setAttribute('aria-pressed', String(Boolean(state.voice)));
  button.textContent = state.voice ? 'Turn voice off' : 'Turn voice on';
}

$('#voice-toggle').addEventListener('click', () => {
  if (state.voice) {
    state.voice.stop();
    state.voice = null;
    updateVoiceButton();
    return;
  }
  void attempt(async () => {
    state.voice = await startVoice({ token: state.token, gameId: state.gameId, onStatus: (text) => ($('#voice-status').textContent = text) });
    updateVoiceButton();
  });
});

const capitalize = (s) => s.charAt(0).toUpperCase() + s.slice(1);

// ---- start -----------------------------------------------------------------------------------

if (!state.token) show('sign-in');
else {
  const wanted = new URLSearchParams(location.hash.slice(1)).get('game') ?? state.gameId;
  if (wanted) void enterGame(wanted);
  else show('lobby');
}
