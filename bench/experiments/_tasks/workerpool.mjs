// workerpool's worker script: registers the shared task code.
import workerpool from 'workerpool';
import * as work from './work.mjs';

workerpool.worker({ ...work });
