// ESM entry of `offthread/schema`: re-exports the CommonJS build, so that `import`
// and `require` share one module instance (one SchemaReadError, one Builder class).
// A test checks that this list matches the CommonJS exports.
import cjs from './runtime.js';

export const {
  SIZES,
  ARRAY_ALIGN,
  STRUCT_ALIGN,
  SchemaReadError,
  SchemaWriteError,
  Budget,
  Message,
  StructView,
  VariantTable,
  AosView,
  SoaView,
  VarColumn,
  StringColumn,
  utf8Length,
  varTotal,
  fillUtf8,
  fillUtf16,
  fillVar,
  Builder,
  alignUp,
  putInt64Number,
  halvesOf,
  putInt64s,
  unionSoa,
  dynamicHeader,
  unknownTag,
} = cjs;
