/// The fixed, public credentials of the Vonage sandbox (``VonageEmulator``), documented so the official `vonage`
/// Python packages or `curl` can be pointed at it. They never work against Vonage.
public enum VonageSandbox {
    /// The API key (Basic-auth user for v2, `api_key` for v1).
    public static let apiKey = "5a4db0c1"
    public static let apiSecret = "Sandbox0Secret01"
    /// The one application the emulator knows, for application JWTs (RS256).
    public static let applicationID = "5a4db0c1-0000-4000-8000-5a4db0c10001"
    /// The signature secret the emulator signs its callbacks with (HS256).
    public static let signatureSecret = "sandbox-signature-secret-0000000000000001"
    public static let brand = "Gateway"
    /// The account id v1 search answers show.
    public static let accountID = "5a4db0c1"
    /// The WhatsApp Business number the sandbox provider sends WhatsApp codes from (Vonage's `from`).
    public static let whatsappFrom = "14155550199"

    /// The sandbox application's private key: a public test key, so that a client can sign application JWTs
    /// the emulator accepts. Never use it anywhere else.
    public static let privateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIIEvAIBADANBgkqhkiG9w0BAQEFAASCBKYwggSiAgEAAoIBAQC+8GGRlV3MtjcT
        /W5iQf+no51hcitz9pUwqzS2X3eUgfY6XMlRIXnoZMDw2UkcmuWuZWSGO+L3kJIY
        vxbutosukDz6eSiYq9328vT1/1wzHqY1aNOeAev/20Qq+HthwlAly4UZX0FEnQi/
        4SLVueBclEnuhzaqT88DDMjuT8fofdmZF5qx5LumHkycI7dDHkw93Ptl7g3D/Y5C
        OiJMIfvYdvpJzI6+ZS9aZKLl2XD0NZ5aSIaieLS1EulWfNKok5UpVbnuOlCnsg9Q
        4Tv+KU7dh/n46R9uxpXkY9ICcx9+xbCBIVCKEJyijCI8ey42HaIVOcDPkAQtcwwG
        n5UQdIRdAgMBAAECggEAIRDFQL4mXoVen+hXNY5a3NfVcRLhqgUVfHZlnECHl5Dz
        CFPZrCJZN3C9RehHBDxh0pPt9t4Hldo0JrNu3/t+OlvRp4mUSW4X9ARKfhBREew4
        mc6zuOz5xtbcpPlfeoQ5N3ZZcBWiGqT8JyhwjSURkM7AR92kDpXgElXkNPrdcmoN
        98Zx4ppWw2acfbUrMKPYVNlu1HuxRpypy+Vrbh7Rn5bJ+E4NbILPL0JR1Bgu6LP6
        NxMQ3lm9g82m9dRLwc1UAYgwoJSZ0xYZSc6yL/i8Hw8//YKdzp2CkcItFB5gRfFZ
        DKSXcMU9TwS9z1SpWwIOfaMq8ujgugpffz2+ujEXGQKBgQDzU/Eesx59CC6ZvtUS
        PxmfI+3wiRF5Xp8qu/nPbXG5+tHIg0DP/Heo6u1y8Q6r/XbkqmIF5Y2D1dYGN7JJ
        b/bnTwqQQ/P8/ngHmj8Zvi4svepibnAHqDfpO6QhaRZG7oIzq3NPPwEzDF9+ySY1
        ZruBQBaqRA9gCn4MzKnQsiYTOQKBgQDI4fzv7G5Msra3tmv2/CJLKAaQm6w0+ZEQ
        a0khXOuwNXuFFgpSXb+4OjtkwHR3ygYIutEr2phVGj31VFiOSGqnKvfls6cxQ4J2
        Saspg9aoQUuhr3xlWRgvs3l7CClYnCMNLhB8Lzc5FY5F0/E6bz/O+G87PiG8rJ4Q
        K2Ccz64GRQKBgDgObIwAA9QWIHY26mtLsiFha51wVmA5lj2IFKLeucZ4q/+fjTzd
        EswNYyqJsjGZMNy5C+AD5Dgs+SNxjVcxvhXHtc1KelkcXpaRyFur3oNcNTT78D8z
        V74ZiVRRG1q387Lnmqb1Ate5z/4rZOwEgMnj89TB3TDo+eUE+VIk2HSxAoGAbt+s
        h4/rYRHSn5tkA7IuC2VQGkiRx7tnQbS1bGCpBVy/jDkaAVQVGU2qsnU201cB9ZeH
        E7lXEsGlKN8g8Ycuto2UvYdm5F3qh/cpLYTC2aMQZ3FAK3/9RXa9uhZLG8kx33hp
        SOGWjT9Eg23zWtlEUqv0WLJ2VHjB1RLcBDDsUDECgYAmZsrSppvHfATfi7XPzg9X
        kXMKq2pwceTF5p3eXkTqfnszcb7NUJQ/omXpwMv+fyNCYQmFHc9Egc7XSFy5k1TF
        l6jJ9kOM/7bGSuUtbRXRMUPXC+uQ87OJykgZzYokYOyn+oAmaCdtwr7WxZ9z6UZl
        s1JtVNyhmHx4M5KBcMqbCQ==
        -----END PRIVATE KEY-----
        """
}
