//! The kernels of the read-only data path section: a streaming copy and a gather with reuse,
//! with plain pointers, with `__ldg`, and with `const` and `__restrict__` alone and together;
//! and a gather whose source issues its loads first with plain pointers.

crate::kernel_names! {
    /// One kernel of the read-only section.
    pub enum ReadOnlyKernel in "coalescing.cu" {
        /// `dst[i] = src[i]`, one element per thread, plain pointers.
        CopyPlain => "copy_plain",
        /// The same load through `__ldg`.
        CopyLdg => "copy_ldg",
        /// `out[i] = table[index[i]]`, one element per thread, plain pointers.
        GatherPlain => "gather_plain",
        /// Both loads through `__ldg`.
        GatherLdg => "gather_ldg",
        /// Four elements per thread, load-store-load-store, plain pointers.
        Gather4Plain => "gather4_plain",
        /// The same with every load through `__ldg`.
        Gather4Ldg => "gather4_ldg",
        /// The same code with `const __restrict__` pointers.
        Gather4Restrict => "gather4_restrict",
        /// `const` pointers without `__restrict__`.
        Gather4Const => "gather4_const",
        /// `__restrict__` pointers without `const`.
        Gather4RestrictOnly => "gather4_restrict_only",
        /// `__restrict__` on `out` alone.
        Gather4RestrictOut => "gather4_restrict_out",
        /// Plain pointers, the eight loads written before the four stores.
        Gather4LoadsFirst => "gather4_loads_first",
    }
}

impl ReadOnlyKernel {
    /// What the kernel does (the figure's categories).
    pub fn workload(self) -> &'static str {
        match self {
            ReadOnlyKernel::CopyPlain | ReadOnlyKernel::CopyLdg => "copy, 1 per thread",
            ReadOnlyKernel::GatherPlain | ReadOnlyKernel::GatherLdg => {
                "gather, 1 per thread"
            }
            _ => "gather, 4 per thread",
        }
    }

    /// How its loads are marked (the figure's series).
    pub fn qualifiers(self) -> &'static str {
        match self {
            ReadOnlyKernel::CopyPlain
            | ReadOnlyKernel::GatherPlain
            | ReadOnlyKernel::Gather4Plain => "plain pointers",
            ReadOnlyKernel::CopyLdg
            | ReadOnlyKernel::GatherLdg
            | ReadOnlyKernel::Gather4Ldg => "__ldg",
            ReadOnlyKernel::Gather4Restrict => "const __restrict__",
            ReadOnlyKernel::Gather4Const => "const",
            ReadOnlyKernel::Gather4RestrictOnly => "__restrict__",
            ReadOnlyKernel::Gather4RestrictOut => "__restrict__ on out",
            ReadOnlyKernel::Gather4LoadsFirst => "plain, loads first",
        }
    }

    /// Elements each thread handles.
    pub fn per_thread(self) -> usize {
        match self {
            ReadOnlyKernel::CopyPlain
            | ReadOnlyKernel::CopyLdg
            | ReadOnlyKernel::GatherPlain
            | ReadOnlyKernel::GatherLdg => 1,
            _ => 4,
        }
    }

    /// Whether it is a gather (`table`, `index`, `out`) rather than a copy (`src`, `dst`).
    pub fn is_gather(self) -> bool {
        !matches!(self, ReadOnlyKernel::CopyPlain | ReadOnlyKernel::CopyLdg)
    }
}
