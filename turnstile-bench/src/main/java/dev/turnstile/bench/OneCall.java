package dev.turnstile.bench;

/**
 * A contender that is one call, which tells whether it did its work: a scheduling path, a fenced
 * or unfenced write. The name is the benchmark thread's own (a lock name, a row's key).
 *
 * @param id the label in the tables
 * @param call the call
 */
record OneCall(String id, Call call) implements Contender {
    /** The call. */
    interface Call {
        boolean run(String name) throws Exception;
    }

    @Override
    public boolean acquireRelease(String name) throws Exception {
        return call.run(name);
    }
}
