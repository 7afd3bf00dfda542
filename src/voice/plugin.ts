/**
 * Mounts voice signaling on a Fastify app that has `@fastify/websocket` registered:
 * `GET /v1/voice` (WebSocket). Returns the hub, so the caller can tell it when rooms change.
 */
import type { FastifyInstance } from 'fastify';
import { VoiceSignalingHub, type VoiceSignalingOptions } from './signaling-hub.js';

export interface VoiceRouteOptions extends VoiceSignalingOptions {
  /** (Default: "/v1/voice") */
  path?: string;
}

export function registerVoiceSignaling(app: FastifyInstance, options: VoiceRouteOptions): VoiceSignalingHub {
  const hub = new VoiceSignalingHub(options);
  app.get(options.path ?? '/v1/voice', { websocket: true, schema: { hide: true } }, (socket) => hub.accept(socket));
  return hub;
}
