"""Hand-written scaffolds and masked groups the MolP2S generator combines.

Every scaffold has one attachment point ``[*]`` on a carbon atom; every group has one ``[*]`` at
its attachment atom. Groups are sorted by heavy-atom count: the candidates of one record are all
drawn from the same size class, so the mask metadata (``masked_heavy_atoms``) fits every candidate
and cannot single out the answer by itself.
"""

from __future__ import annotations

SCAFFOLDS: tuple[str, ...] = (
    "[*]c1ccccc1",  # phenyl
    "Cc1ccc([*])cc1",  # 4-tolyl
    "COc1ccc([*])cc1",  # 4-methoxyphenyl
    "[*]c1ccncc1",  # 4-pyridyl
    "[*]c1cccs1",  # 2-thienyl
    "[*]c1ccco1",  # 2-furyl
    "Clc1ccc([*])cc1",  # 4-chlorophenyl
    "Cc1cc(C)cc([*])c1",  # 3,5-dimethylphenyl
    "[*]c1ccc2ccccc2c1",  # 2-naphthyl
    "FC(F)(F)c1ccc([*])cc1",  # 4-(trifluoromethyl)phenyl
    "CN(C)c1ccc([*])cc1",  # 4-(dimethylamino)phenyl
    "[*]c1cccc(C#N)c1",  # 3-cyanophenyl
    "CC(=O)c1ccc([*])cc1",  # 4-acetylphenyl
    "[*]c1ccc(F)cc1",  # 4-fluorophenyl
    "[*]c1cnccn1",  # pyrazinyl
    "[*]Cc1ccccc1",  # benzyl
    "[*]CCc1ccccc1",  # 2-phenylethyl
    "[*]C1CCCCC1",  # cyclohexyl
    "[*]C1CC1",  # cyclopropyl
    "[*]C1CCOCC1",  # tetrahydropyran-4-yl
    "[*]C(C)C",  # isopropyl
    "[*]CC",  # ethyl
    "CCCC[*]",  # n-butyl
    "CC(C)(C)[*]",  # tert-butyl
    "[*]CC(C)(C)C",  # neopentyl
    "C=CC[*]",  # allyl
)

GROUPS_BY_SIZE: dict[int, tuple[str, ...]] = {
    1: ("[*]C", "[*]O", "[*]N", "[*]F", "[*]Cl", "[*]Br", "[*]S"),
    2: (
        "[*]CC", "[*]OC", "[*]C#N", "[*]C=O", "[*]NC", "[*]CO", "[*]C#C", "[*]SC", "[*]C=C",
        "[*]CN",
    ),
    3: (
        "[*][N+](=O)[O-]", "[*]C(=O)O", "[*]C(C)=O", "[*]OCC", "[*]C(C)C", "[*]N(C)C",
        "[*]C(N)=O", "[*]CCC", "[*]NC=O", "[*]CC#N", "[*]C#CC", "[*]COC", "[*]CCO", "[*]OC=O",
    ),
    4: (
        "[*]C(=O)OC", "[*]OC(C)=O", "[*]NC(C)=O", "[*]C(=O)NC", "[*]C(C)(C)C", "[*]CCCC",
        "[*]CC(=O)O", "[*]C(=O)CC", "[*]OC(C)C", "[*]C(F)(F)F", "[*]S(C)(=O)=O", "[*]CC(C)=O",
        "[*]N(C)C=O", "[*]C(C)(C)O",
    ),
}

TEXT_MASK_TOKEN = "<MASK>"
