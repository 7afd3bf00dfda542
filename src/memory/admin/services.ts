import type { Database } from '../db/types.js';
import type { Keyring } from '../crypto/keyring.js';
import type { DataKeys } from '../crypto/data-keys.js';
import { AuditLedger } from '../audit/audit.js';
import { ConsentTokens } from '../cloning/consent.js';
import { Cloner } from '../cloning/cloner.js';
import { Lineages } from '../cloning/lineage.js';

/** The admin side of the memory service: ledger, consent, cloning and lineage, over one database. */
export interface AdminServices {
  db: Database;
  ledger: AuditLedger;
  consents: ConsentTokens;
  cloner: Cloner;
  lineages: Lineages;
}

export function adminServices(db: Database, keyring: Keyring, keys: DataKeys, checkpointDir: string): AdminServices {
  const consents = new ConsentTokens(db, keyring);
  return {
    db,
    ledger: new AuditLedger(db, keyring, checkpointDir),
    consents,
    cloner: new Cloner(db, keys, consents),
    lineages: new Lineages(db),
  };
}
