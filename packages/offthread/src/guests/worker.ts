/**
 * The guests' part of a pool worker (pool/worker-loop.ts): it loads the guests from
 * their 'guest-setup' message and answers their calls, posted or through the mailbox.
 */
import type { WorkerJobs } from '../pool/worker-loop.js';
import { GuestRuntime, type GuestSetupMessage, runGuestCall, runGuestCallView } from './runtime.js';

export function guestJobs(): WorkerJobs {
  let guests: GuestRuntime | null = null;
  return {
    setup: {
      'guest-setup': (msg) => {
        guests = new GuestRuntime(msg as GuestSetupMessage);
      },
    },
    call: (call) => runGuestCall(guests, call),
    callView: (call) => runGuestCallView(guests, call),
  };
}
