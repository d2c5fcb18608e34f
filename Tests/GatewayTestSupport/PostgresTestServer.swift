import Foundation

/// A PostgreSQL server for the store tests: `GATEWAY_TEST_POSTGRES_URL` when set (a throwaway database:
/// each test makes its own schema and leaves it), else a throwaway cluster started once per test process
/// with the local `initdb` and `pg_ctl` (Debian's /usr/lib/postgresql/<version>/bin) in a temporary
/// directory, on a free loopback port, stopped and removed by a watchdog when the process ends. As root the cluster
/// runs as the `postgres` user (initdb refuses root).
///
/// `GATEWAY_TEST_POSTGRES_REQUIRED=1` (set by `.ci/run`) turns "no PostgreSQL here" into a failure.
public enum PostgresTestServer {
    /// Whether the PostgreSQL tests can run here.
    public static var isAvailable: Bool {
        ProcessInfo.processInfo.environment["GATEWAY_TEST_POSTGRES_URL"].map { !$0.isEmpty } == true
            || binaries != nil
    }

    /// Whether a missing PostgreSQL fails the tests instead of skipping them (`GATEWAY_TEST_POSTGRES_REQUIRED=1`).
    public static var isRequired: Bool {
        ProcessInfo.processInfo.environment["GATEWAY_TEST_POSTGRES_REQUIRED"] == "1"
    }

    /// `postgres://user@127.0.0.1:port/database` of the server, started on first use.
    public static func url() async throws -> String {
        if let url = ProcessInfo.processInfo.environment["GATEWAY_TEST_POSTGRES_URL"], !url.isEmpty { return url }
        return try await Cluster.shared.url()
    }

    /// The newest installed server's bin directory.
    static var binaries: URL? {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql", isDirectory: true)
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        return versions.compactMap(Int.init).sorted().reversed().map {
            root.appendingPathComponent("\($0)/bin", isDirectory: true)
        }.first { FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("initdb").path) }
    }

    private actor Cluster {
        static let shared = Cluster()
        private var starting: Task<String, any Error>?

        /// Starts the cluster once. initdb and pg_ctl run on a thread of their own: waiting for them on the
        /// cooperative pool held one of its two threads (on two cores) for as long as they took on a busy
        /// machine, and other tests' timeouts fired that much late.
        func url() async throws -> String {
            let starting =
                self.starting
                ?? Task {
                    try await withCheckedThrowingContinuation { continuation in
                        Thread.detachNewThread { continuation.resume(with: Result { try Self.start() }) }
                    }
                }
            self.starting = starting
            return try await starting.value
        }

        private static func start() throws -> String {
            guard let bin = PostgresTestServer.binaries else {
                throw Failure("no PostgreSQL binaries under /usr/lib/postgresql")
            }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "gateway-pg-\(UUID().uuidString.prefix(8))", isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let asRoot = getuid() == 0
            if asRoot {
                // The cluster runs as `postgres`; the directory must be its own.
                try run("/bin/chown", ["postgres", directory.path], as: nil)
            }
            let user = asRoot ? "postgres" : nil
            let data = directory.appendingPathComponent("data").path
            try run(
                bin.appendingPathComponent("initdb").path,
                ["-D", data, "-U", "gateway", "--auth=trust", "-E", "UTF8", "--no-sync"], as: user)
            let port = try LoopbackPort.next()
            let options =
                "-p \(port) -k \(directory.path) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300"
            try run(
                bin.appendingPathComponent("pg_ctl").path,
                ["-D", data, "-o", options, "-l", directory.appendingPathComponent("log").path, "-w", "start"], as: user
            )
            // A watchdog stops and removes the cluster once this process is gone, however it ends (an exit
            // handler would not run on a crash or kill, and Foundation's Process cannot be waited on in one).
            let pgctl = bin.appendingPathComponent("pg_ctl").path
            let stop =
                (user.map { "/usr/sbin/runuser -u \($0) -- " } ?? "") + "\(pgctl) -D \(data) -m immediate -w stop"
            let watchdog = Process()
            watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
            watchdog.arguments = [
                "-c",
                "while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done; \(stop) >/dev/null 2>&1; rm -rf \(directory.path)",
            ]
            watchdog.standardInput = FileHandle.nullDevice
            watchdog.standardOutput = FileHandle.nullDevice
            watchdog.standardError = FileHandle.nullDevice
            try watchdog.run()
            return "postgres://gateway@127.0.0.1:\(port)/postgres"
        }

        private static func run(_ tool: String, _ arguments: [String], as user: String?) throws {
            try runSync(tool, arguments, as: user)
        }

        /// posix_spawn and waitpid: Foundation's Process left `runuser` unreaped here (its exit went unseen).
        static func runSync(_ tool: String, _ arguments: [String], as user: String?) throws {
            let argv = (user.map { ["/usr/sbin/runuser", "-u", $0, "--", tool] } ?? [tool]) + arguments
            var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
            defer { for pointer in cArguments { free(pointer) } }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            var pid = pid_t()
            let spawned = posix_spawn(&pid, argv[0], &actions, nil, &cArguments, environ)
            guard spawned == 0 else { throw Failure("cannot start \(tool): \(spawned)") }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            guard status == 0 else { throw Failure("\(tool) \(arguments.joined(separator: " ")) failed (\(status))") }
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
