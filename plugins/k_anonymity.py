"""placeholder while the foundation is assembled"""
