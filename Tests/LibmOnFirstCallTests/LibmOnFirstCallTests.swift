#if canImport(Glibc)
import Glibc
import Testing

/// The C math functions the vmhost executable defines in place of libm's
/// (Sources/ReferenceApp/LibmOnFirstCall): linked into this test binary too, so each call below is
/// to the target's definition (the test checks that it is not libm's), and each answers as libm's
/// own, bit for bit: the rounding functions (one SSE4.1 instruction on x86-64) on the inputs where
/// rounding goes wrong (halves, signed zeros, the edge of the integers, infinities, NaNs), in each
/// rounding mode and with the exceptions they raise; the others (forwarded to libm, loaded by the
/// first call) for each shape of parameters.
@Suite struct LibmOnFirstCallTests {
    /// libm's own `name`, looked up in libm as the target does.
    static func libm<Function>(_ name: String, _ type: Function.Type) throws -> Function {
        let handle = try #require(dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL), "libm.so.6 cannot be opened")
        let symbol = try #require(dlsym(handle, name), "libm.so.6 has no \(name)")
        return unsafeBitCast(symbol, to: type)
    }

    /// Whether `function` (the target's) and libm's `name` are different functions.
    static func differ<Function>(_ function: Function, from name: String) throws -> Bool {
        let theirs = try libm(name, Function.self)
        return unsafeBitCast(function, to: UnsafeRawPointer.self) != unsafeBitCast(theirs, to: UnsafeRawPointer.self)
    }

    static let doubles: [Double] = [
        0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.7, -3.7, 0.49999999999999994, -0.49999999999999994,
        4503599627370495.5, -4503599627370495.5, 4503599627370496, 9007199254740991, 1e300, -1e300,
        .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .greatestFiniteMagnitude, .infinity, -.infinity,
        .nan, -.nan, .signalingNaN, Double(nan: 0x1234, signaling: false),
    ]
    static let floats: [Float] = [
        0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.7, -3.7, 0.49999997, 8388607.5, -8388607.5, 8388608,
        1e38, -1e38, .leastNonzeroMagnitude, .greatestFiniteMagnitude, .infinity, -.infinity,
        .nan, -.nan, .signalingNaN,
    ]
    static let roundingModes: [(name: String, mode: Int32)] = [
        ("to nearest", FE_TONEAREST), ("upward", FE_UPWARD), ("downward", FE_DOWNWARD), ("toward zero", FE_TOWARDZERO),
    ]

    /// FE_ALL_EXCEPT (a macro Swift does not import).
    static let allExceptions: Int32 = FE_INEXACT | FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW

    typealias DoubleFunction = @convention(c) (Double) -> Double
    typealias FloatFunction = @convention(c) (Float) -> Float

    static let roundingDoubles: [(String, DoubleFunction)] = [
        ("ceil", ceil), ("floor", floor), ("trunc", trunc), ("rint", rint), ("nearbyint", nearbyint),
    ]
    static let roundingFloats: [(String, FloatFunction)] = [
        ("ceilf", ceilf), ("floorf", floorf), ("truncf", truncf), ("rintf", rintf), ("nearbyintf", nearbyintf),
    ]

    @Test func roundingOfDoublesIsLibmsBitForBitInEveryModeWithItsExceptions() throws {
        for (name, ours) in Self.roundingDoubles {
            #expect(try Self.differ(ours, from: name), "\(name) is libm's, not the target's")
            let theirs = try Self.libm(name, DoubleFunction.self)
            Self.expectSameRounding(name, ours: { ours($0) }, theirs: { theirs($0) }, of: Self.doubles)
        }
    }

    @Test func roundingOfFloatsIsLibmsBitForBitInEveryModeWithItsExceptions() throws {
        for (name, ours) in Self.roundingFloats {
            #expect(try Self.differ(ours, from: name), "\(name) is libm's, not the target's")
            let theirs = try Self.libm(name, FloatFunction.self)
            Self.expectSameRounding(name, ours: { ours($0) }, theirs: { theirs($0) }, of: Self.floats)
        }
    }

    /// `ours` gives libm's `theirs` bit for bit for each of `values` in every rounding mode, and
    /// raises the same exceptions.
    static func expectSameRounding<T: BinaryFloatingPoint>(
        _ name: String, ours: (T) -> T, theirs: (T) -> T, of values: [T]
    ) {
        func bits(_ value: T) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
        for (modeName, mode) in roundingModes {
            #expect(fesetround(mode) == 0)
            defer { fesetround(FE_TONEAREST) }
            for x in values {
                feclearexcept(allExceptions)
                let result = ours(x)
                let raised = fetestexcept(FE_INEXACT | FE_INVALID)
                feclearexcept(allExceptions)
                let expected = theirs(x)
                let expectedRaised = fetestexcept(FE_INEXACT | FE_INVALID)
                #expect(bits(result) == bits(expected), "\(name)(\(x)) rounding \(modeName): \(result), libm \(expected)")
                #expect(raised == expectedRaised, "\(name)(\(x)) rounding \(modeName): exceptions \(raised), libm \(expectedRaised)")
            }
        }
    }

    /// One function of each shape of parameters the target forwards, against libm's.
    @Test func forwardedFunctionsPassTheirArgumentsAndResultsThrough() throws {
        let sinOfDouble: DoubleFunction = sin
        #expect(try Self.differ(sinOfDouble, from: "sin"))
        #expect(sinOfDouble(0.5).bitPattern == (try Self.libm("sin", DoubleFunction.self))(0.5).bitPattern)
        let expOfFloat: FloatFunction = expf
        #expect(try Self.differ(expOfFloat, from: "expf"))
        #expect(expOfFloat(1.5).bitPattern == (try Self.libm("expf", FloatFunction.self))(1.5).bitPattern)

        typealias Binary = @convention(c) (Double, Double) -> Double
        let remainderOfDoubles: Binary = remainder
        #expect(try Self.differ(remainderOfDoubles, from: "remainder"))
        #expect(remainderOfDoubles(7.5, 2) == -0.5)
        typealias BinaryFloat = @convention(c) (Float, Float) -> Float
        let powOfFloats: BinaryFloat = powf
        #expect(try Self.differ(powOfFloats, from: "powf"))
        #expect(powOfFloats(2, 10) == 1024)
        #expect(powOfFloats(1.1, 3.3).bitPattern == (try Self.libm("powf", BinaryFloat.self))(1.1, 3.3).bitPattern)

        typealias Ternary = @convention(c) (Double, Double, Double) -> Double
        let fused: Ternary = fma
        #expect(try Self.differ(fused, from: "fma"))
        // 0.1 × 10 − 1 rounded once: the error of 0.1's representation, not 0.
        #expect(fused(0.1, 10, -1) == 0x1p-54)
        #expect(fmaf(2, 3, 4) == 10)

        typealias WithQuotient = @convention(c) (Double, Double, UnsafeMutablePointer<Int32>?) -> Double
        let remainderAndQuotient: WithQuotient = remquo
        #expect(try Self.differ(remainderAndQuotient, from: "remquo"))
        var quotient: Int32 = 0
        #expect(remainderAndQuotient(7, 2, &quotient) == -1)
        #expect(quotient == 4)
        #expect(remquof(-7, 2, &quotient) == 1)
        #expect(quotient == -4)

        typealias WithSign = @convention(c) (Double, UnsafeMutablePointer<Int32>?) -> Double
        let logGamma: WithSign = lgamma_r
        #expect(try Self.differ(logGamma, from: "lgamma_r"))
        var sign: Int32 = 0
        var libmSign: Int32 = 0
        #expect(logGamma(-0.5, &sign).bitPattern == (try Self.libm("lgamma_r", WithSign.self))(-0.5, &libmSign).bitPattern)
        #expect(sign == -1 && libmSign == -1)
        #expect(lgammaf_r(-2.5, &sign) < 0)
        #expect(sign == -1)

        typealias Bessel = @convention(c) (Int32, Double) -> Double
        let besselFirst: Bessel = jn
        #expect(try Self.differ(besselFirst, from: "jn"))
        #expect(besselFirst(1, 2).bitPattern == (try Self.libm("jn", Bessel.self))(1, 2).bitPattern)
        #expect(yn(0, 1).bitPattern == (try Self.libm("yn", Bessel.self))(0, 1).bitPattern)

        typealias Tagged = @convention(c) (UnsafePointer<CChar>?) -> Float
        let taggedNaN: Tagged = nanf
        #expect(try Self.differ(taggedNaN, from: "nanf"))
        #expect(taggedNaN("5").isNaN && taggedNaN("5").bitPattern & 0x3f_ffff == 5)
    }

    #if arch(x86_64)
    /// The `long double` forms (Float80 on x86-64: passed and returned on the x87 stack).
    @Test func forwardedLongDoubleFunctionsPassTheirArgumentsAndResultsThrough() throws {
        typealias Unary = @convention(c) (Float80) -> Float80
        let squareRoot: Unary = sqrtl
        #expect(try Self.differ(squareRoot, from: "sqrtl"))
        #expect(squareRoot(2) == (try Self.libm("sqrtl", Unary.self))(2))
        #expect(squareRoot(2) > 1.4142135623730950 && squareRoot(2) < 1.4142135623730951)
        #expect(fmal(3, 4, 5) == 17)
        #expect(powl(2, 64) == 18446744073709551616)
        #expect(ceill(-0.5) == 0 && ceill(-0.5).sign == .minus)
        var quotient: Int32 = 0
        #expect(remquol(10, 3, &quotient) == 1)
        #expect(quotient == 3)
        var sign: Int32 = 0
        #expect(lgammal_r(-0.5, &sign) > 1.2655 && sign == -1)
        let tagged = nanl("9")
        #expect(tagged.isNaN && tagged.significandBitPattern & 0xff == 9)
    }
    #endif
}
#endif
