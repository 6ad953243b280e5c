/**
 * The run budget: how many threads of one pool may run work at once, across every
 * executor the pool's features use (the native engine's Rust threads, worker engines'
 * workers, the task workers, guest workers). It knows no feature; each executor takes a
 * `Lease` and asks it before a job enters (`enter`, else `wait`), and tells it when the
 * job has left (`leave`).
 *
 * A lease holds slots of the budget. An executor with `width` threads runs at most
 * `min(load, width)` threads, where `load` is the weight of the jobs inside it (1 for a
 * job on one thread; `width` for a job that spreads over all of them, as a large native
 * π): so a lease keeps `held ≥ min(load, width)`, and gives back each slot above that as
 * soon as a job leaves. Once a lease holds `width` slots, more jobs may enter without
 * more slots (the executor queues them and cannot run more threads): that is what keeps
 * the small-call path of an uncontended pool as it was, hundreds of jobs in the Rust
 * queue at once. While anyone waits, nobody enters past the queue: waiters are served by
 * priority (high first; every 4th grant prefers normal and every 16th low, as the task
 * queues take, so none starves), first come first served within one, and the head waiter
 * is not overtaken by a smaller one behind it.
 */

/** A job waiting for the budget: its executor makes it and is called back. */
export interface BudgetWaiter {
  /** 0 high, 1 normal, 2 low. */
  priority: number;
  /** Threads it may use at once (1, or its executor's width). */
  weight: number;
  /** Its slots are taken and it is inside: the executor starts it now. */
  start(): void;
  /** The executor dropped it (destroyed); `clear` calls this. */
  fail(err: Error): void;
}

export interface BudgetStats {
  /** Threads that may run work at once (the pool's `threads`). */
  size: number;
  /** Slots held by executors now. */
  used: number;
  /** Jobs waiting for a slot. */
  waiting: number;
}

export class Budget {
  readonly size: number;
  /** Slots held by leases. */
  used = 0;
  /** Waiters in all three lists. */
  waiting = 0;
  readonly #lists: BudgetWaiter[][] = [[], [], []];
  readonly #owner = new Map<BudgetWaiter, Lease>();
  #grants = 0;
  #granting = false;

  constructor(size: number) {
    this.size = size;
  }

  /** A lease for an executor that runs at most `width` threads. */
  lease(width: number): Lease {
    return new Lease(this, width);
  }

  stats(): BudgetStats {
    return { size: this.size, used: this.used, waiting: this.waiting };
  }

  /** @internal Lease.wait */
  _add(lease: Lease, w: BudgetWaiter): void {
    (this.#lists[w.priority] as BudgetWaiter[]).push(w);
    this.#owner.set(w, lease);
    this.waiting++;
    this._grant();
  }

  /** @internal Lease.cancel: false when `w` was not waiting (already started). */
  _remove(w: BudgetWaiter): boolean {
    if (!this.#owner.delete(w)) return false;
    const list = this.#lists[w.priority] as BudgetWaiter[];
    list.splice(list.indexOf(w), 1);
    this.waiting--;
    this._grant(); // it may have been the head that held the others back
    return true;
  }

  /** @internal The waiters of `lease`, taken out of the lists. */
  _take(lease: Lease): BudgetWaiter[] {
    const out: BudgetWaiter[] = [];
    for (const [w, l] of this.#owner) if (l === lease) out.push(w);
    for (const w of out) this._remove(w);
    return out;
  }

  /** The list the next grant serves: its fairness turn, else the first non-empty by priority. */
  #head(): BudgetWaiter[] | null {
    const n = this.#grants;
    const first = (n & 15) === 15 ? 2 : (n & 3) === 3 ? 1 : 0;
    if ((this.#lists[first] as BudgetWaiter[]).length > 0) return this.#lists[first] as BudgetWaiter[];
    for (const list of this.#lists) if (list.length > 0) return list;
    return null;
  }

  /** Starts waiters while the head one's slots are free (re-entered from a start: the loop goes on). */
  _grant(): void {
    if (this.#granting) return;
    this.#granting = true;
    try {
      for (;;) {
        const list = this.#head();
        if (!list) return;
        const w = list[0] as BudgetWaiter;
        const lease = this.#owner.get(w) as Lease;
        const need = lease._need(w.weight);
        if (need > this.size - this.used) return;
        list.shift();
        this.#owner.delete(w);
        this.waiting--;
        this.#grants++;
        this.used += need;
        lease._admit(need, w.weight);
        w.start();
      }
    } finally {
      this.#granting = false;
    }
  }
}

/** One executor's share of a budget (see the top of this file). */
export class Lease {
  readonly budget: Budget;
  /** Threads the executor runs at most. */
  readonly width: number;
  /** Slots held. */
  held = 0;
  /** Weight of the jobs inside the executor (entered, not yet left). */
  load = 0;
  /** This lease's waiters. */
  waiting = 0;

  constructor(budget: Budget, width: number) {
    this.budget = budget;
    this.width = width;
  }

  /** Slots a job of `weight` needs beyond those held (≤ 0: none). */
  _need(weight: number): number {
    return Math.min(this.load + weight, this.width) - this.held;
  }

  /** @internal Budget._grant */
  _admit(need: number, weight: number): void {
    if (need > 0) this.held += need;
    this.load += weight;
    this.waiting--;
  }

  /**
   * The fast path: true when a job of `weight` may enter now (it is counted inside);
   * false when it must `wait` (someone waits already, or the slots are taken).
   */
  enter(weight = 1): boolean {
    const b = this.budget;
    if (b.waiting > 0) return false;
    const need = Math.min(this.load + weight, this.width) - this.held;
    if (need > 0) {
      if (need > b.size - b.used) return false;
      b.used += need;
      this.held += need;
    }
    this.load += weight;
    return true;
  }

  /** Queues `w` for slots; `w.start` runs once it is inside (perhaps at once). */
  wait(w: BudgetWaiter): void {
    this.waiting++;
    this.budget._add(this, w);
  }

  /**
   * Enters now (`w.start` runs at once: undefined back) or queues `w` for slots (`w`
   * back, to `cancel` if its call is aborted before it starts).
   */
  admit(w: BudgetWaiter): BudgetWaiter | undefined {
    if (this.enter(w.weight)) {
      w.start();
      return undefined;
    }
    this.wait(w);
    return w;
  }

  /** Takes `w` out of the queue (its call aborted); false when it was not waiting. */
  cancel(w: BudgetWaiter): boolean {
    if (!this.budget._remove(w)) return false;
    this.waiting--;
    return true;
  }

  /** A job of `weight` left the executor: the slots above what the rest need go back. */
  leave(weight = 1): void {
    this.load -= weight;
    const keep = Math.min(this.load, this.width);
    if (this.held > keep) {
      this.budget.used -= this.held - keep;
      this.held = keep;
      if (this.budget.waiting > 0) this.budget._grant();
    }
  }

  /** The executor stopped (destroyed): every slot goes back, every waiter fails with `err`. */
  clear(err: Error): void {
    const dropped = this.budget._take(this);
    this.waiting = 0;
    this.load = 0;
    this.leave(0);
    for (const w of dropped) w.fail(err);
  }
}
