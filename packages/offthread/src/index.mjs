// ESM entry: re-exports the CommonJS build so that `import` and `require` share one
// default pool and one native addon instance (no dual-package hazard).
import cjs from './index.js';

export const {
  md5,
  pi,
  qr,
  schema,
  stats,
  backendInfo,
  AbortError,
  errorRegistry,
  OffthreadError,
  OffthreadRangeError,
  OffthreadTypeError,
  defaultPool,
  Pool,
  all,
  Emitter,
  monitorLoopDelay,
  filters,
  FilterTransform,
  Source,
  guests,
} = cjs;
export default cjs;
