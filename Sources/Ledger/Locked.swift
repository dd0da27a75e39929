#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value that threads share, reached only while holding its lock: the one lock of this codebase.
///
/// Not the standard library's `Mutex`: on Linux that hands a contended lock from one thread to the next
/// inside the kernel (a priority-inheriting futex), where ThreadSanitizer cannot see it, so two writers
/// taking turns on a shared ledger were reported as racing on the state it guards. ThreadSanitizer
/// intercepts a pthread mutex, so the sanitizer run checks what this guards.
public final class Locked<Value: Sendable>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    public init(_ value: Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        self.value = value
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, holding the lock; nothing else reaches the value until it returns.
    public func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure)
        -> Result
    {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
