// GET /bench: the browser experiment's page (bench/browser) with the offthread browser
// entry under it (packages/offthread/dist/browser: entry, worker and wasm side by side),
// served cross-origin isolated (COOP/COEP), so the page's workers can share memory.
// Static files only: the page needs no server.
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';

const dir = (path) => fileURLToPath(new URL(path, import.meta.url));

const ISOLATION = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-embedder-policy': 'require-corp',
  'cross-origin-resource-policy': 'same-origin',
};

/** @param {import('fastify').FastifyInstance} app */
export function registerBenchPage(app) {
  app.get('/bench', (_request, reply) => reply.redirect('/bench/'));
  // An encapsulated plugin: its onSend hook adds the headers to these routes only.
  app.register(async (scope) => {
    scope.addHook('onSend', async (_request, reply, payload) => {
      reply.headers(ISOLATION);
      return payload;
    });
    // The page's import map points `offthread/internal` at ./offthread/offthread-internal.js
    // (the browser entry plus the research π variants, as the package builds it), with its
    // worker and offthread.wasm beside it.
    const roots = [
      ['/bench/', '../../../bench/browser/'],
      ['/bench/offthread/', '../../../packages/offthread/dist/browser/'],
    ];
    for (const [prefix, root] of roots) {
      scope.register(fastifyStatic, { root: dir(root), prefix, decorateReply: false, index: 'index.html' });
    }
  });
}
