import { openEngineDatabase, type EngineDatabase } from '../../src/engine/store/database.js';
import { openTestDatabase, type TestDatabase } from './database.js';

const opened: { db: EngineDatabase; test?: TestDatabase }[] = [];

/** The engine's database on the backend under test: in-memory PGlite, or a fresh native database. */
export async function engineDatabase(): Promise<EngineDatabase> {
  const test = process.env.DATABASE_URL ? await openTestDatabase({ migrate: false }) : undefined;
  const db = await openEngineDatabase(test?.url ? { url: test.url } : {});
  opened.push({ db, ...(test ? { test } : {}) });
  return db;
}

/** Closes (and drops) every database `engineDatabase` opened; for `afterEach`. */
export async function closeEngineDatabases(): Promise<void> {
  for (const { db, test } of opened.splice(0)) {
    await db.close();
    await test?.drop();
  }
}
