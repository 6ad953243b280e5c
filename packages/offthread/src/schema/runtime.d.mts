export * from './runtime.js';
