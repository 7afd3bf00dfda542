/**
 * Sealing and opening the text of a memory row: an episode's text, or a fact's value and summary,
 * encrypted under its row's data key (cipher.ts) and bound to the row by its additional
 * authenticated data (tier, tenant, game, npc, participant, id): copied into another row, game,
 * npc or participant, it no longer opens.
 *
 * Everything that reads memory text opens it here: the service's reads, context assembly,
 * consolidation, the inspector and cloning. A row whose key was destroyed (shredded, erased) is
 * no memory; a row whose ciphertext fails authentication is reported by id and left out, so one
 * damaged row never takes its neighbours down.
 */
import type { DurableTier, FactTier } from '../types.js';
import { open, seal } from './cipher.js';

/** The columns a sealed row is opened by. */
export interface SealedRow {
  id: string;
  key_id: string;
  ciphertext: Uint8Array;
  npc_id: string;
  game_id?: string | null;
  participant_id?: string | null;
}

/** What a fact row seals. */
export interface FactBody {
  value: string;
  summary: string;
}

/** Why a row did not open. */
export type Unopened = 'key_destroyed' | 'integrity_failure';

/** The additional authenticated data that binds a ciphertext to its row. */
export function rowAad(tier: DurableTier, tenantId: string, gameId: string | undefined, npcId: string, participantId: string | undefined, id: string): string {
  return [tier, tenantId, gameId ?? '', npcId, participantId ?? '', id].join('\0');
}

const aadOf = (tier: DurableTier, tenantId: string, row: Omit<SealedRow, 'key_id' | 'ciphertext'>) =>
  rowAad(tier, tenantId, row.game_id ?? undefined, row.npc_id, row.participant_id ?? undefined, row.id);

/** Seals an episode's text for its row. */
export function sealText(key: Uint8Array, tier: DurableTier, tenantId: string, row: Omit<SealedRow, 'key_id' | 'ciphertext'>, text: string): Uint8Array {
  return seal(key, Buffer.from(text, 'utf8'), aadOf(tier, tenantId, row));
}

/** Seals a fact's value and summary for its row. */
export function sealFact(key: Uint8Array, tier: FactTier, tenantId: string, row: Omit<SealedRow, 'key_id' | 'ciphertext'>, body: FactBody): Uint8Array {
  return sealText(key, tier, tenantId, row, JSON.stringify(body));
}

/** Opens the rows of one tenant under the data keys loaded for them. */
export class RowOpener {
  constructor(
    private readonly tenantId: string,
    private readonly keys: ReadonlyMap<string, Uint8Array>,
    private readonly onIntegrityFailure?: (rowId: string) => void,
  ) {}

  /** The row's plaintext, or why it did not open. */
  open(tier: DurableTier, row: SealedRow): Buffer | Unopened {
    const key = this.keys.get(row.key_id);
    if (!key) return 'key_destroyed';
    try {
      return open(key, row.ciphertext, aadOf(tier, this.tenantId, row));
    } catch {
      this.onIntegrityFailure?.(row.id);
      return 'integrity_failure';
    }
  }

  /** An episode's text; undefined when it did not open. */
  text(tier: DurableTier, row: SealedRow): string | undefined {
    const plain = this.open(tier, row);
    return typeof plain === 'string' ? undefined : plain.toString('utf8');
  }

  /** A fact's value and summary; undefined when it did not open. */
  fact(tier: FactTier, row: SealedRow): FactBody | undefined {
    const plain = this.text(tier, row);
    return plain === undefined ? undefined : (JSON.parse(plain) as FactBody);
  }
}
