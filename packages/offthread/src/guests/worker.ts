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

export function guestJobs(): WorkerJobs {
  let guests: GuestRuntime | null = null;
  return {
    setup: {
      'guest-setup': (msg) => {
        guests = new GuestRuntime(msg as GuestSetupMessage);
      },
      // A live host's changes (host.add / host.remove), in the order the host made them.
      'guest-add': (msg) => guests?.add((msg as GuestAddMessage).module),
      'guest-remove': (msg) => guests?.remove((msg as GuestRemoveMessage).index),
    },
    call: (call) => runGuestCall(guests, call),
    callView: (call) => runGuestCallView(guests, call),
  };
}
