/** What every route module of the memory service's API is given (app.ts builds it once). */
import type { AdminServices } from '../admin/services.js';
import type { Credentials } from '../credentials.js';
import type { Lifecycle } from '../lifecycle/lifecycle.js';
import type { MemoryService } from '../service.js';

export interface MemoryRouteDeps {
  /** Ledger, consent, cloning and lineage (admin/services.ts). */
  admin: AdminServices;
  service: MemoryService;
  credentials: Credentials;
  /** Game end, shredding, erasure, anomalies (lifecycle/lifecycle.ts). */
  lifecycle?: Lifecycle;
}
