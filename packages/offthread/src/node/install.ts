/** Installs Node's host before anything in the package runs (imported first by index.ts). */
import { installHost } from '../host.js';
import { nodeHost } from './host.js';

installHost(nodeHost);
