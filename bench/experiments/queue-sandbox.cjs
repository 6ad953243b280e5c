// BullMQ's sandboxed processor for the queue experiment: the same π work as the offthread
// workers, in JS (offthread's jsBitwise: the same `inside`), as BullMQ users write it.
// Job data is plain JSON { samples, seed }, the way such processors receive it.
const { pi } = require('offthread');

module.exports = async (job) => {
  const { samples, seed } = job.data;
  return pi.estimateSync(samples, { seed, variant: 'jsBitwise' }).inside;
};
