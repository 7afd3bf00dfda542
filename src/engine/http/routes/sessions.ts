/** Accounts and sessions: sign up, sign in, an anonymous session, sign out. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { sessionToken, type EngineRouteDeps } from '../deps.js';
import { AnonymousBody, SignInBody, SignUpBody } from '../schemas.js';

export function sessionRoutes(fastify: FastifyInstance, { engine, streams, voice }: EngineRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/v1/accounts', { schema: { summary: 'Sign up', security: [], body: SignUpBody } }, async (request, reply) => {
    const account = await engine.accounts.register(request.body.username, request.body.password);
    return reply.status(201).send({ username: account.username });
  });

  app.post('/v1/sessions', { schema: { summary: 'Sign in', security: [], body: SignInBody } }, async (request, reply) => {
    const { username, password, controller } = request.body;
    const opened = await engine.sessions.login(username, password, controller ? { controller } : {});
    return reply.status(201).send(opened);
  });

  app.post('/v1/sessions/anonymous', { schema: { summary: 'Start an anonymous session', security: [], body: AnonymousBody } }, async (request, reply) => {
    const { displayName, controller } = request.body ?? {};
    const opened = engine.sessions.openAnonymous({ ...(displayName ? { displayName } : {}), ...(controller ? { controller } : {}) });
    await engine.sessions.saved(opened.token); // acknowledged only once it is stored
    return reply.status(201).send(opened);
  });

  app.delete('/v1/sessions/current', { schema: { summary: 'Sign out; leaves every game' } }, async (request, reply) => {
    const token = sessionToken(engine, request);
    for (const gameId of engine.gamesOf(token)) {
      try {
        engine.leave(token, gameId);
      } catch {
        // The game ended meanwhile: nothing to leave.
      }
    }
    await engine.committed();
    streams.signedOut(token);
    await engine.sessions.close(token);
    voice?.refresh();
    return reply.status(204).send();
  });
}
