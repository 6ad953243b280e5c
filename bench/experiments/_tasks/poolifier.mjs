// poolifier's worker script: a ThreadWorker over the shared task code.
import { ThreadWorker } from 'poolifier';
import * as work from './work.mjs';

export default new ThreadWorker({ ...work });
