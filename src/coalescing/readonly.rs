//! The kernels of the read-only data path section: a streaming copy and a gather with reuse,
//! with plain pointers, with `__ldg`, and with `const __restrict__`.

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
        }
    }

    /// Elements each thread handles.
    pub fn per_thread(self) -> usize {
        match self {
            ReadOnlyKernel::Gather4Plain
            | ReadOnlyKernel::Gather4Ldg
            | ReadOnlyKernel::Gather4Restrict => 4,
            _ => 1,
        }
    }

    /// Whether it is a gather (`table`, `index`, `out`) rather than a copy (`src`, `dst`).
    pub fn is_gather(self) -> bool {
        !matches!(self, ReadOnlyKernel::CopyPlain | ReadOnlyKernel::CopyLdg)
    }
}
