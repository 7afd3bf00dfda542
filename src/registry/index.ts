export * from './name-registry.js';
export * from './registry-client.js';
export { buildRegistryApp, registryRoutes, parseNameQuery } from './http-app.js';
