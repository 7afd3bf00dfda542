/**
 * The attributes an admin principal can hold (see principals.ts). Kept apart so that
 * credentials.ts can give a new tenant's first admin key its owner attributes without a cycle.
 */
export const ADMIN_ACTIONS = ['clone', 'invalidate', 'erase', 'write_procedural', 'end_game', 'audit'] as const;
export type AdminAction = (typeof ADMIN_ACTIONS)[number];

/** In a principal's npc list: every NPC of its tenant. */
export const ALL_NPCS = '*';

/** The attributes a tenant's first admin key gets (the tenant owner): every action on every NPC. */
export const OWNER_ATTRIBUTES = { name: 'tenant owner', npcs: [ALL_NPCS], actions: [...ADMIN_ACTIONS] };
