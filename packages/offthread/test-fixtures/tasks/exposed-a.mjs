// Names its functions by side effect only (no exports), as a Vite worker bundle does.
import { exposeTasks } from 'offthread';

// A slow start, so a second module's import overlaps this one's.
await new Promise((resolve) => setTimeout(resolve, 30));
exposeTasks({ which: () => 'a', twice: (x) => 2 * x });
