export { registerVoiceSignaling, type VoiceRouteOptions } from './plugin.js';
export { VoiceSignalingHub, type VoiceSignalingOptions } from './signaling-hub.js';
export type { VoicePresence } from './presence.js';
export * from './protocol.js';
