import { EmbeddedTaskStore } from '../../src/store/embedded/embedded-store.js';
import { describeTaskStoreContract } from './contract.js';

describeTaskStoreContract('EmbeddedTaskStore', () => {
  // One process, one store: a "replica" is the same instance.
  const store = new EmbeddedTaskStore();
  return {
    open: () => store,
    residue: async () => store.size,
  };
});
