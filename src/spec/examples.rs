//! Reference kernels built with [`super::build`]: polybench gemm,
//! covariance and 3mm as the C would lower them. Tests, benchmarks and the
//! synthesizer's tests use them before (and independently of) the frontend.

use tenslift_frontend::ir::{Kernel, Role, ScalarType::F64};

use super::build::*;

/// polybench gemm: C = beta·C + alpha·A·B.
pub fn gemm() -> Kernel {
    KernelBuilder::new("gemm")
        .size("ni")
        .size("nj")
        .size("nk")
        .scalar("alpha", F64)
        .scalar("beta", F64)
        .array("C", F64, &["ni", "nj"], Role::InOut)
        .array("A", F64, &["ni", "nk"], Role::Input)
        .array("B", F64, &["nk", "nj"], Role::Input)
        .body(vec![for_(
            "i",
            "0",
            "ni",
            vec![
                for_(
                    "j",
                    "0",
                    "nj",
                    vec![assign(
                        el("C", &["i", "j"], F64),
                        mul(load("C", &["i", "j"], F64), param("beta", F64)),
                    )],
                ),
                for_(
                    "k",
                    "0",
                    "nk",
                    vec![for_(
                        "j",
                        "0",
                        "nj",
                        vec![assign(
                            el("C", &["i", "j"], F64),
                            add(
                                load("C", &["i", "j"], F64),
                                mul(
                                    mul(param("alpha", F64), load("A", &["i", "k"], F64)),
                                    load("B", &["k", "j"], F64),
                                ),
                            ),
                        )],
                    )],
                ),
            ],
        )])
        .build()
}

/// polybench covariance: mean, centering in place, then the triangle of cov.
pub fn covariance() -> Kernel {
    KernelBuilder::new("covariance")
        .size("m")
        .size("n")
        .scalar("float_n", F64)
        .array("data", F64, &["n", "m"], Role::InOut)
        .array("cov", F64, &["m", "m"], Role::Output)
        .array("mean", F64, &["m"], Role::Output)
        .body(vec![
            for_(
                "j",
                "0",
                "m",
                vec![
                    assign(el("mean", &["j"], F64), flit("0.0", F64)),
                    for_(
                        "i",
                        "0",
                        "n",
                        vec![assign(
                            el("mean", &["j"], F64),
                            add(load("mean", &["j"], F64), load("data", &["i", "j"], F64)),
                        )],
                    ),
                    assign(
                        el("mean", &["j"], F64),
                        div(load("mean", &["j"], F64), param("float_n", F64)),
                    ),
                ],
            ),
            for_(
                "i",
                "0",
                "n",
                vec![for_(
                    "j",
                    "0",
                    "m",
                    vec![assign(
                        el("data", &["i", "j"], F64),
                        sub(load("data", &["i", "j"], F64), load("mean", &["j"], F64)),
                    )],
                )],
            ),
            for_(
                "i",
                "0",
                "m",
                vec![for_(
                    "j",
                    "i",
                    "m",
                    vec![
                        assign(el("cov", &["i", "j"], F64), flit("0.0", F64)),
                        for_(
                            "k",
                            "0",
                            "n",
                            vec![assign(
                                el("cov", &["i", "j"], F64),
                                add(
                                    load("cov", &["i", "j"], F64),
                                    mul(
                                        load("data", &["k", "i"], F64),
                                        load("data", &["k", "j"], F64),
                                    ),
                                ),
                            )],
                        ),
                        assign(
                            el("cov", &["i", "j"], F64),
                            div(
                                load("cov", &["i", "j"], F64),
                                sub(param("float_n", F64), flit("1.0", F64)),
                            ),
                        ),
                        assign(el("cov", &["j", "i"], F64), load("cov", &["i", "j"], F64)),
                    ],
                )],
            ),
        ])
        .build()
}

/// polybench 3mm: E = A·B, F = C·D, G = E·F (E, F, G outputs).
pub fn three_mm() -> Kernel {
    let matmul = |out: &str, l: &str, r: &str, n_i: &str, n_j: &str, n_k: &str| {
        for_(
            "i",
            "0",
            n_i,
            vec![for_(
                "j",
                "0",
                n_j,
                vec![
                    assign(el(out, &["i", "j"], F64), flit("0.0", F64)),
                    for_(
                        "k",
                        "0",
                        n_k,
                        vec![assign(
                            el(out, &["i", "j"], F64),
                            add(
                                load(out, &["i", "j"], F64),
                                mul(load(l, &["i", "k"], F64), load(r, &["k", "j"], F64)),
                            ),
                        )],
                    ),
                ],
            )],
        )
    };
    KernelBuilder::new("3mm")
        .size("ni")
        .size("nj")
        .size("nk")
        .size("nl")
        .size("nm")
        .array("E", F64, &["ni", "nj"], Role::Output)
        .array("A", F64, &["ni", "nk"], Role::Input)
        .array("B", F64, &["nk", "nj"], Role::Input)
        .array("F", F64, &["nj", "nl"], Role::Output)
        .array("C", F64, &["nj", "nm"], Role::Input)
        .array("D", F64, &["nm", "nl"], Role::Input)
        .array("G", F64, &["ni", "nl"], Role::Output)
        .body(vec![
            matmul("E", "A", "B", "ni", "nj", "nk"),
            matmul("F", "C", "D", "nj", "nl", "nm"),
            matmul("G", "E", "F", "ni", "nl", "nj"),
        ])
        .build()
}
