package org.ksasl;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** Helpers for the asynchronous drivers. */
final class Stages {
    private Stages() {}

    /** How a stage completed: its value, or its exception ({@code error} not null). */
    record Outcome<T>(T value, Throwable error) {}

    /** A future that completes normally once {@code stage} completes, either way. */
    static <T> CompletableFuture<Outcome<T>> settled(CompletionStage<T> stage) {
        CompletableFuture<Outcome<T>> f = new CompletableFuture<>();
        stage.whenComplete((v, t) -> f.complete(new Outcome<>(v, t)));
        return f;
    }
}
