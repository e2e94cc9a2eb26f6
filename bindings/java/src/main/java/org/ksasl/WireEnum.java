package org.ksasl;

import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;

/**
 * The stable numbers of a Java enum, read once from the core's table of the same enum
 * ({@code ksasl::wire::table}): each constant is the table entry whose name, in upper case with
 * {@code -} as {@code _}, is the constant's name. Numbers, never ordinals, cross JNI.
 *
 * @param <E> the Java enum
 */
final class WireEnum<E extends Enum<E>> {
    private final Map<E, Integer> numbers;
    private final Object[] byNumber;

    private WireEnum(Class<E> type, String table) {
        Native.init();
        Fields f = new Fields(Native.wireTable(table));
        int[] n = new int[f.i32()];
        String[] names = new String[n.length];
        for (int i = 0; i < n.length; i++) {
            n[i] = f.i32();
            names[i] = f.str();
        }
        numbers = new EnumMap<>(type);
        int max = 0;
        for (int v : n) {
            max = Math.max(max, v);
        }
        byNumber = new Object[max + 1];
        for (int i = 0; i < n.length; i++) {
            String constant = names[i].toUpperCase(Locale.ROOT).replace('-', '_');
            for (E e : type.getEnumConstants()) {
                if (e.name().equals(constant)) {
                    numbers.put(e, n[i]);
                    byNumber[n[i]] = e;
                }
            }
        }
        for (E e : type.getEnumConstants()) {
            if (!numbers.containsKey(e)) {
                throw new IllegalStateException(type.getName() + "." + e + " is not in the native table " + table);
            }
        }
    }

    /** The numbers of {@code type}'s constants from the core's table {@code table}. */
    static <E extends Enum<E>> WireEnum<E> of(Class<E> type, String table) {
        return new WireEnum<>(type, table);
    }

    /** The stable number of {@code e}. */
    int number(E e) {
        return numbers.get(e);
    }

    /** The constant with stable number {@code n}. */
    @SuppressWarnings("unchecked")
    E of(int n) {
        if (n < 0 || n >= byNumber.length || byNumber[n] == null) {
            throw new IllegalStateException("no constant has the number " + n);
        }
        return (E) byNumber[n];
    }
}
