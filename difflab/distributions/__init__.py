r"""``difflab.distributions``: PyTorch's ``torch.distributions``.

Probability distributions with ``sample``, reparameterized ``rsample``,
``log_prob``, ``entropy``, moments, ``cdf``/``icdf`` where they have a closed
form, ``expand`` and argument checks (``validate_args``); ``kl_divergence``
between pairs registered with ``register_kl``; ``transforms`` (bijections with
their log-determinants), ``TransformedDistribution`` (a distribution pushed
through them) and ``biject_to``/``transform_to`` (from the reals onto a
constraint); distributions of matrices, ``LKJCholesky`` (correlations) and
``Wishart`` (covariances).  Every formula is a composite
of difflab's primitives (``lgamma``, ``digamma``, ``erfinv``, ``softmax``,
...), so gradients flow through ``log_prob`` and ``rsample`` in all four
methods, and draws come from difflab's generator (``manual_seed``).

>>> import difflab as dl
>>> from difflab.distributions import Normal, kl_divergence
>>> kl_divergence(Normal(0.0, 1.0), Normal(1.0, 1.0)).item()     # (μ₁ - μ₂)²/2
0.5
"""

from difflab.distributions import constraints, transforms
from difflab.distributions.constraint_registry import biject_to, transform_to
from difflab.distributions.continuous import Exponential, Laplace, LogNormal, Normal, Uniform
from difflab.distributions.counts import Geometric, Multinomial, NegativeBinomial
from difflab.distributions.discrete import (
    Bernoulli,
    Binomial,
    Categorical,
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
    Poisson,
)
from difflab.distributions.distribution import Distribution, ExponentialFamily
from difflab.distributions.gamma import (
    Beta,
    Chi2,
    Dirichlet,
    FisherSnedecor,
    Gamma,
    InverseGamma,
    StudentT,
)
from difflab.distributions.kl import kl_divergence, register_kl
from difflab.distributions.matrices import LKJCholesky, Wishart
from difflab.distributions.multivariate import (
    Independent,
    LowRankMultivariateNormal,
    MultivariateNormal,
)
from difflab.distributions.relaxed import (
    ContinuousBernoulli,
    LogitRelaxedBernoulli,
    MixtureSameFamily,
    RelaxedBernoulli,
    RelaxedOneHotCategorical,
)
from difflab.distributions.transformed import LogisticNormal, TransformedDistribution
from difflab.distributions.transforms import (  # (PyTorch exports them here too)
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from difflab.distributions.univariate import (
    Cauchy,
    GeneralizedPareto,
    Gumbel,
    HalfCauchy,
    HalfNormal,
    Kumaraswamy,
    Pareto,
    VonMises,
    Weibull,
)

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli",
    "Dirichlet", "Distribution", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma",
    "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent",
    "InverseGamma", "Kumaraswamy", "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal",
    "LogitRelaxedBernoulli", "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial",
    "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical",
    "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "RelaxedBernoulli",
    "RelaxedOneHotCategorical", "StudentT", "TransformedDistribution", "Uniform", "VonMises",
    "Weibull", "Wishart", "biject_to", "constraints", "kl_divergence", "register_kl",
    "transform_to", "transforms",
    # the transforms, as ``torch.distributions`` exports them
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
    "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform",
    "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
    "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
    "SoftplusTransform", "StackTransform", "StickBreakingTransform", "TanhTransform",
    "Transform", "identity_transform",
]
