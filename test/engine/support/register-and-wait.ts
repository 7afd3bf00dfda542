/**
 * A child process for the kill -9 test: registers an account and opens a session in the engine's
 * database at argv[2] (PGlite directory, or a postgres:// URL), prints the session token once
 * both are acknowledged, then waits to be killed.
 */
import { AccountStore } from '../../../src/engine/accounts.js';
import { systemClock } from '../../../src/engine/clock.js';
import { SessionStore } from '../../../src/engine/sessions.js';
import { openEngineDatabase } from '../../../src/engine/store/database.js';

const target = process.argv[2]!;
const db = await openEngineDatabase(target.startsWith('postgres') ? { url: target } : { dir: target });
const accounts = new AccountStore({ cost: { N: 1024, r: 8, p: 1 }, db });
await accounts.register('kim_killed', 'a long passphrase');
const sessions = new SessionStore(accounts, systemClock, { db });
const { token } = await sessions.login('kim_killed', 'a long passphrase');
process.stdout.write(`${token}\n`);
setInterval(() => {}, 1000);
