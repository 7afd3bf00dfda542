export * from './outbox.js';
export * from './store.js';
