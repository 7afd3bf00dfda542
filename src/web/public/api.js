/* global fetch, location, WebSocket, setTimeout -- browser globals (this file runs in the page) */
// The engine's public API as the page uses it: HTTP with the session token, and the room stream
// WebSocket with cursors (see src/engine/http/app.ts and stream.ts). Same calls a bot makes.

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export async function call(method, path, { token, body } = {}) {
  const headers = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (response.status === 204) return undefined;
  const json = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = json.error ?? {};
    throw new ApiError(response.status, error.code ?? 'HTTP_' + response.status, error.message ?? `The server answered ${response.status}.`);
  }
  return json;
}

export const api = {
  signUp: (username, password) => call('POST', '/v1/accounts', { body: { username, password } }),
  signIn: (username, password) => call('POST', '/v1/sessions', { body: { username, password } }),
  anonymous: (displayName) => call('POST', '/v1/sessions/anonymous', { body: displayName ? { displayName } : {} }),
  signOut: (token) => call('DELETE', '/v1/sessions/current', { token }),
  createGame: (token) => call('POST', '/v1/games', { token, body: {} }),
  join: (token, gameId) => call('POST', `/v1/games/${encodeURIComponent(gameId)}/join`, { token }),
  leave: (token, gameId) => call('POST', `/v1/games/${encodeURIComponent(gameId)}/leave`, { token }),
  say: (token, gameId, text, target) => call('POST', `/v1/games/${encodeURIComponent(gameId)}/say`, { token, body: target ? { text, target } : { text } }),
  act: (token, gameId, action) => call('POST', `/v1/games/${encodeURIComponent(gameId)}/act`, { token, body: action }),
  room: (token, gameId) => call('GET', `/web/v1/games/${encodeURIComponent(gameId)}/room`, { token }),
  frontDesk: (token, fullName, gameId) => call('POST', '/v1/front-desk', { token, body: gameId ? { fullName, gameId } : { fullName } }),
};

/**
 * The room's ordered stream, live. Calls `onEntry(entry, cursor)` once per entry, in order,
 * without gaps; reconnects with the last cursor after a drop, and stops for good when the
 * server says the player left, the game ended or the session signed out.
 */
export function openStream(token, gameId, { onEntry, onClosed, onState }) {
  let cursor = 0;
  let socket;
  let stopped = false;
  let retryMs = 250;
  const url = () => `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/v1/games/${encodeURIComponent(gameId)}/stream`;

  const connect = () => {
    socket = new WebSocket(url());
    socket.addEventListener('open', () => socket.send(JSON.stringify({ type: 'hello', token, after: cursor })));
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(event.data);
      if (message.type === 'ready') {
        retryMs = 250;
        onState?.('live');
      } else if (message.type === 'entry' && message.cursor === cursor + 1) {
        cursor = message.cursor;
        onEntry(message.entry, message.cursor);
      } else if (message.type === 'closed') {
        stopped = true;
        onClosed?.(message.reason, message);
      } else if (message.type === 'error') {
        if (['INVALID_SESSION', 'NOT_IN_GAME', 'UNKNOWN_GAME', 'GAME_ENDED'].includes(message.code)) {
          stopped = true;
          onClosed?.(message.code);
        }
      }
    });
    socket.addEventListener('close', () => {
      if (stopped) return;
      onState?.('reconnecting');
      setTimeout(connect, retryMs);
      retryMs = Math.min(retryMs * 2, 5000);
    });
  };
  connect();
  return {
    get cursor() {
      return cursor;
    },
    close() {
      stopped = true;
      socket?.close();
    },
  };
}
