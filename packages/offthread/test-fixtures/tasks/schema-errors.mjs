// A task that calls offthread's schema reader on bytes it was given: its SchemaReadError
// must reach the caller as the same class (an offthread error raised on the worker).
import { schema } from 'offthread';

export const readTemperatures = (bytes) => schema.TemperatureBatchReader.fromBytes(bytes).readings().length;
