/**
 * The guests' part of a pool worker (pool/worker-loop.ts): it loads the guests from
 * their 'guest-setup' message and answers their calls, posted or through the mailbox.
 */
import type { WorkerJobs } from '../pool/worker-loop.js';
import {
  type GuestAddMessage,
  type GuestRemoveMessage,
  GuestRuntime,
  type GuestSetupMessage,
  runGuestCall,
  runGuestCallView,
} from './runtime.js';
import type { GuestMemoryMessage } from './shared-input.js';

export function guestJobs(): WorkerJobs {
  let guests: GuestRuntime | null = null;
  const memories = new Map<string, WebAssembly.Memory>();
  return {
    setup: {
      // An input memory guests read in place (shared-input.ts): before the modules that import it.
      'guest-memory': (msg) => {
        const { name, memory } = msg as GuestMemoryMessage;
        memories.set(name, memory);
      },
      'guest-setup': (msg) => {
        guests = new GuestRuntime(msg as GuestSetupMessage, memories);
      },
      // A live host's changes (host.add / host.remove), in the order the host made them.
      'guest-add': (msg) => guests?.add((msg as GuestAddMessage).module),
      'guest-remove': (msg) => guests?.remove((msg as GuestRemoveMessage).index),
    },
    call: (call) => runGuestCall(guests, call),
    callView: (call) => runGuestCallView(guests, call),
  };
}
