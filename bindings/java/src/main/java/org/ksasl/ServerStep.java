package org.ksasl;

/**
 * The result of one server step.
 *
 * @param kind what happened
 * @param message the challenge (or the final server message) to send; {@code null} when none
 */
public record ServerStep(Kind kind, byte[] message) {
    /** What a step of a {@link ServerExchange} produced. */
    public enum Kind {
        /** Send {@link #message()} and wait for the next client message. */
        CHALLENGE,
        /** Look up a credential and answer with {@code provideCredential}. */
        NEED_CREDENTIAL,
        /** Authenticated; send {@link #message()} if present. */
        DONE,
        /**
         * A host mechanism answers later ({@link HostServerStep#later}): wait for
         * {@link ServerExchange#pendingWork()} and resume.
         */
        PENDING;

        private static final WireEnum<Kind> WIRE = WireEnum.of(Kind.class, "ServerStepKind");
    }

    /** From the native record: the kind's number, the message. */
    static ServerStep read(Fields f) {
        return new ServerStep(Kind.WIRE.of(f.u8()), f.bytes());
    }

    @Override
    public String toString() {
        return "ServerStep[" + kind + ", " + (message == null ? "no message" : message.length + " bytes") + "]";
    }
}
