/**
 * A child process for the kill -9 test: starts the whole system on the data directory argv[2]
 * (with the database URLs in argv[3] as JSON, if any), signs in an account, creates a game and
 * joins it with five guests, prints `GAME <id> <token>`, then has all six say numbered lines as
 * fast as the engine answers, printing `ACK <n>` for each one acknowledged, until it is killed.
 */
import { startSystemOn } from '../../helpers/system.js';

const dataDir = process.argv[2]!;
const urls = JSON.parse(process.argv[3] ?? '{}') as { databaseUrl?: string; engineDatabaseUrl?: string };
const system = await startSystemOn(dataDir, urls);
const call = async (url: string, body: object, token?: string) => {
  const response = await fetch(`${system.urls.engine}${url}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, string> };
};
await call('/v1/accounts', { username: 'kim_plays_on', password: 'a long passphrase' });
const { token } = (await call('/v1/sessions', { username: 'kim_plays_on', password: 'a long passphrase' })).body;
const { gameId } = (await call('/v1/games', {}, token)).body;
const guests = await Promise.all(Array.from({ length: 5 }, async (_, i) => (await call('/v1/sessions/anonymous', { displayName: `Guest ${i}` })).body.token!));
for (const t of [token!, ...guests]) await call(`/v1/games/${gameId}/join`, {}, t);
process.stdout.write(`GAME ${gameId} ${token}\n`);
let next = 1;
const speaker = async (as: string) => {
  for (;;) {
    const n = next++;
    const { status } = await call(`/v1/games/${gameId}/say`, { text: `backlog line ${n}` }, as);
    if (status === 201) process.stdout.write(`ACK ${n}\n`);
    else await new Promise((resolve) => setTimeout(resolve, 500)); // rate-limited: the line was not taken
  }
};
await Promise.all([token!, ...guests].map(speaker));
