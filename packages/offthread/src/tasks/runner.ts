/**
 * The tasks feature on a worker: loads task modules when they are registered and runs
 * their exports for the pool's loop (pool/serve.ts).
 */
import type { JobRunner } from '../pool/serve.js';
import { CodedFailure } from '../pool/wire.js';
import { setTaskContext, takeExposed } from './context.js';

/** Setup messages the caller side (tasks/index.ts) sends every worker. */
export type TaskSetup =
  | { kind: 'module'; mod: number; url: string }
  | { kind: 'export'; fn: number; mod: number; name: string };

/** What a worker tells the caller of a module it loaded: the exports that stream (generator functions). */
export interface ModuleShape {
  url: string;
  streams: string[];
}

function streamExports(ns: Record<string, unknown>): string[] {
  const fallback = ns.default;
  const all = { ...(fallback && typeof fallback === 'object' ? (fallback as Record<string, unknown>) : {}), ...ns };
  return Object.keys(all).filter((k) => {
    const tag = Object.prototype.toString.call(all[k]);
    return tag === '[object AsyncGeneratorFunction]' || tag === '[object GeneratorFunction]';
  });
}

interface LoadedModule {
  url: string;
  loading: Promise<unknown>;
  namespace?: Record<string, unknown>;
  error?: unknown;
}

const LOADED = Symbol.for('offthread.taskModules');

export function taskRunner(load: (url: string) => Promise<unknown>): JobRunner {
  const modules = new Map<number, LoadedModule>();
  // One import at a time: a module that exposes its functions (exposeTasks) hands them over
  // through one global, taken as its import settles, before the next module runs.
  let importing: Promise<unknown> = Promise.resolve();
  const exports: { mod: number; name: string; fn?: (...args: unknown[]) => unknown; error?: CodedFailure }[] = [];

  function resolve(fn: number): (...args: unknown[]) => unknown {
    const e = exports[fn];
    if (!e) throw new CodedFailure('ERR_TASK_EXPORT', `unknown task function ${fn}`);
    if (e.fn) return e.fn;
    if (e.error) throw e.error;
    const m = modules.get(e.mod) as LoadedModule;
    if (m.error !== undefined) {
      const why = m.error instanceof Error ? m.error.message : String(m.error);
      e.error = new CodedFailure('ERR_TASK_MODULE', `cannot load the task module ${m.url}: ${why}`);
      throw e.error;
    }
    const ns = m.namespace as Record<string, unknown>;
    // A CommonJS module imported from ESM puts module.exports on `default`.
    let value = ns[e.name];
    const fallback = ns.default as Record<string, unknown> | undefined;
    if (value === undefined && fallback && typeof fallback === 'object') value = fallback[e.name];
    if (typeof value !== 'function') {
      const names = Object.keys(ns).filter((k) => typeof ns[k] === 'function');
      e.error = new CodedFailure(
        'ERR_TASK_EXPORT',
        `the task module ${m.url} has no exported function ${JSON.stringify(e.name)}` +
          (names.length > 0 ? ` (its functions: ${names.join(', ')})` : ''),
      );
      throw e.error;
    }
    e.fn = value as (...args: unknown[]) => unknown;
    return e.fn;
  }

  return {
    setup(body, reply) {
      const s = body as TaskSetup;
      if (s.kind === 'module') {
        const m: LoadedModule = { url: s.url, loading: Promise.resolve() };
        const loaded = importing.then(() => {
          takeExposed();
          return load(s.url);
        });
        importing = loaded.catch(() => {});
        m.loading = loaded.then(
          (ns) => {
            const exposed = takeExposed();
            m.namespace = exposed
              ? { ...(ns as Record<string, unknown>), ...exposed }
              : (ns as Record<string, unknown>);
            reply({ url: s.url, streams: streamExports(m.namespace) } satisfies ModuleShape);
          },
          (err) => {
            m.error = err ?? new Error('import failed');
          },
        );
        modules.set(s.mod, m);
        // A task filter's driver (tasks/stream-driver.ts) finds its export here: a module
        // that named its functions by side effect (exposeTasks) has them only in this namespace.
        const g = globalThis as { [LOADED]?: Map<string, Promise<unknown>> };
        g[LOADED] ??= new Map();
        g[LOADED].set(
          s.url,
          m.loading.then(() => m.namespace),
        );
      } else {
        exports[s.fn] = { mod: s.mod, name: s.name };
      }
    },
    pending(fn) {
      const e = exports[fn];
      const m = e && modules.get(e.mod);
      if (!m || m.namespace || m.error !== undefined) return null;
      return m.loading;
    },
    run(fn, args, context) {
      const f = resolve(fn);
      setTaskContext(context);
      return f(...args);
    },
  };
}
