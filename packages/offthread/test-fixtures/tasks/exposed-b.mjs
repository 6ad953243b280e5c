import { exposeTasks } from 'offthread';

export const exported = () => 'exported';
exposeTasks({ which: () => 'b' });
